# Worker life: restart after pg_terminate_backend, reload on SIGHUP, a single
# coordinator after the launcher is killed, and shared memory after a crash
# restart (stop('immediate')).
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mzcoord_node('life', create_extension => 1);

sub wait_running
{
	my ($what) = @_;
	$node->poll_query_until('postgres',
		"SELECT state = 'running' AND ticks > 0 FROM mzcoord.worker_status()")
	  or die "coordinator not running: $what";
}

sub status
{
	my ($cols) = @_;
	return $node->safe_psql('postgres', "SELECT $cols FROM mzcoord.worker_status()");
}

wait_running('at start');
my $pid1 = status('pid');
is($node->safe_psql('postgres',
		"SELECT backend_type FROM pg_stat_activity WHERE pid = $pid1"),
	'mzcoord coordinator', 'coordinator visible in pg_stat_activity');
is(status('starts'), '1', 'one coordinator started');

# --- pg_terminate_backend: a clean exit, then a new coordinator -------------
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid1)");
$node->poll_query_until('postgres',
	"SELECT pid IS DISTINCT FROM $pid1 AND state = 'running' FROM mzcoord.worker_status()")
  or die 'coordinator did not come back';
my $pid2 = status('pid');
isnt($pid2, $pid1, 'coordinator restarted with a new pid');
is(status('starts'), '2', 'second start counted');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'mzcoord coordinator'"),
	'1', 'exactly one coordinator');
my $log = slurp_file($node->logfile);
unlike($log, qr/"mzcoord coordinator" \(PID $pid1\) exited with exit code 1/,
	'SIGTERM is a clean exit, not an error');

# --- SIGHUP reloads the tick interval ----------------------------------------
$node->append_conf('postgresql.conf', "mzcoord.tick_interval = 5000\n");
$node->reload;
# Once the coordinator has the new interval, two seconds hold at most one
# tick (at 50 ms they held about 40).  How soon it reloads depends on the
# machine's load, so look again, for up to a minute.
my ($t0, $t1);
for my $try (1 .. 30)
{
	$t0 = status('ticks');
	sleep 2;
	$t1 = status('ticks');
	last if $t1 - $t0 <= 1;
}
cmp_ok($t1 - $t0, '<=', 1, 'reloaded interval slows the ticks down');
$node->append_conf('postgresql.conf', "mzcoord.tick_interval = 50\n");
$node->reload;
$node->poll_query_until('postgres',
	"SELECT ticks > $t1 + 5 FROM mzcoord.worker_status()")
  or die 'ticks did not speed up again';
pass('reloaded interval speeds the ticks up again');

# --- Killing the launcher: it comes back, adopts the coordinator -------------
my $lpid = status('launcher_pid');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($lpid)");
$node->poll_query_until('postgres',
	"SELECT launcher_pid IS NOT NULL AND launcher_pid <> $lpid FROM mzcoord.worker_status()")
  or die 'launcher did not come back';
sleep 1;
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'mzcoord coordinator'"),
	'1', 'still exactly one coordinator after the launcher restarted');
is(status('pid'), $pid2, 'the running coordinator was adopted');

# --- Crash restart -------------------------------------------------------------
$node->stop('immediate');
$node->start;
wait_running('after crash restart');
is(status('starts'), '1', 'shared memory was reinitialised');
is(status('last_error IS NULL'), 't', 'no error carried over');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type IN ('mzcoord launcher', 'mzcoord coordinator')"),
	'2', 'launcher and coordinator are back');
# The coordinator starts its maintenance workers after its first tick.
ok( $node->poll_query_until('postgres',
		"SELECT count(*) = 2 FROM pg_stat_activity WHERE backend_type = 'mzcoord maintenance worker'"),
	'the maintenance workers are back');

# A crash of a backend (SIGKILL) restarts the whole cluster; the workers come
# back too.
my $victim = $node->safe_psql('postgres', "SELECT pid FROM mzcoord.worker_status()");
kill 'KILL', $victim;
$node->poll_query_until('postgres',
	"SELECT pid IS DISTINCT FROM $victim AND state = 'running' FROM mzcoord.worker_status()")
  or die 'coordinator did not come back after SIGKILL';
pass('coordinator back after a crash of its process');

# A clean shutdown does not hang on the workers.
$node->stop('fast');
pass('fast shutdown completes');
done_testing();
