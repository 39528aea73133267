# Loading: the extension refuses to install without preloading, and a
# preloaded server whose coordinator database does not exist yet waits for it
# quietly instead of flooding the log with connection failures.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# --- Without shared_preload_libraries ---------------------------------------
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
$plain->start;

my ($ret, $stdout, $stderr) = $plain->psql('postgres',
	"\\set VERBOSITY verbose\nCREATE EXTENSION mzcoord;");
isnt($ret, 0, 'CREATE EXTENSION fails without preloading');
like($stderr, qr/ERROR:\s+55000: mzcoord must be loaded via "shared_preload_libraries"/,
	'error has SQLSTATE 55000 and says what is missing');
like($stderr, qr/HINT:\s+Add mzcoord to shared_preload_libraries in postgresql.conf and restart the server\./,
	'hint says how to fix it');
is($plain->safe_psql('postgres',
		"SELECT count(*) FROM pg_extension WHERE extname = 'mzcoord'"),
	'0', 'nothing was installed');
is($plain->safe_psql('postgres',
		"SELECT count(*) FROM pg_namespace WHERE nspname = 'mzcoord'"),
	'0', 'no schema left behind');

# A C function of the library called directly must not touch missing memory.
$plain->safe_psql('postgres', q{
	CREATE FUNCTION probe_status(OUT state text, OUT database text,
	    OUT launcher_pid integer, OUT pid integer, OUT started_at timestamptz,
	    OUT ticks bigint, OUT last_tick_at timestamptz, OUT last_tick_ms float8,
	    OUT starts bigint, OUT last_error text, OUT last_error_at timestamptz)
	RETURNS record LANGUAGE C AS 'mzcoord', 'mzcoord_worker_status';
});
($ret, $stdout, $stderr) = $plain->psql('postgres', 'SELECT * FROM probe_status()');
like($stderr, qr/mzcoord must be loaded via "shared_preload_libraries"/,
	'library function without shared memory errors out');
is($plain->safe_psql('postgres', 'SELECT 1'), '1', 'server survived');
is($plain->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'mzcoord%'"),
	'0', 'no worker without preloading');
$plain->stop;

# --- Preloaded, coordinator database missing --------------------------------
my $node = PostgreSQL::Test::Cluster->new('waiting');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'mzcoord'
mzcoord.database = 'later_db'
mzcoord.tick_interval = 50
});
$node->start;

# The launcher runs; the coordinator does not, and says why exactly once.
$node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'mzcoord launcher'")
  or die 'launcher did not start';
$node->wait_for_log(qr/database "later_db" does not exist, waiting for it to be created/);
sleep 2;    # 40 ticks of the launcher
my $log = slurp_file($node->logfile);
my @waits = ($log =~ /does not exist, waiting/g);
is(scalar @waits, 1, 'the missing database is logged once');
unlike($log, qr/FATAL/, 'no FATAL connection loop');
unlike($log, qr/exited with exit code/, 'no worker restart loop');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'mzcoord coordinator'"),
	'0', 'no coordinator without its database');

# Once the database exists, the coordinator connects to it and, once the
# extension exists, ticks.
$node->safe_psql('postgres', 'CREATE DATABASE later_db');
$node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'mzcoord coordinator' AND datname = 'later_db'")
  or die 'coordinator did not connect';
$node->safe_psql('later_db', 'CREATE EXTENSION mzcoord');
$node->poll_query_until('later_db',
	"SELECT state = 'running' AND ticks > 0 FROM mzcoord.worker_status()")
  or die 'coordinator did not tick';
pass('coordinator ticks once database and extension exist');

# Dropping the database forcibly stops the coordinator; the launcher goes back
# to waiting without errors.
$node->safe_psql('postgres', 'DROP DATABASE later_db WITH (FORCE)');
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'mzcoord coordinator'")
  or die 'coordinator did not leave';
$node->safe_psql('postgres', 'CREATE EXTENSION mzcoord');
$node->poll_query_until('postgres',
	"SELECT state = 'waiting for database' FROM mzcoord.worker_status()")
  or die 'launcher did not go back to waiting';
pass('launcher waits again after the database is dropped');

$node->stop;
done_testing();
