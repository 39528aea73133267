# A write wakes the work it causes (issue 20): with a long tick interval,
# a commit to a view's input wakes the coordinator, which moves the table
# timeline and dispatches the view's refresh; the view's upper passes the
# write's time before the next regular tick.  Asserted by order, not time:
# worker_status().ticks is the same before the write and once the view
# caught up (a regular tick that happens to fall in between makes the
# attempt inconclusive; it is repeated).
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mzcoord_node('wake', create_extension => 1);
$node->safe_psql('postgres', q{
	CREATE TABLE t (k int);
	SELECT mzcoord.create_table('t');
	SELECT mzcoord.create_materialized_view('v', 'SELECT count(*) AS n FROM t');
});
$node->poll_query_until('postgres', q{
	SELECT upper >= inputs_upper FROM mzcoord.maintenance_status WHERE name = 'public.v'})
  or die 'the view did not catch up';

$node->safe_psql('postgres', q{ALTER SYSTEM SET mzcoord.tick_interval = '10s'});
$node->reload;
# The long interval is in force once a tick has followed the reload.
my $t0 = $node->safe_psql('postgres', 'SELECT ticks FROM mzcoord.worker_status()');
$node->poll_query_until('postgres', qq{
	SELECT ticks > $t0 + 1 FROM mzcoord.worker_status()}) or die;

my $woken = 0;
for my $attempt (1 .. 5)
{
	my $ticks = $node->safe_psql('postgres',
		'SELECT ticks FROM mzcoord.worker_status()');
	my $ts = $node->safe_psql('postgres',
		"INSERT INTO t VALUES ($attempt); SELECT mzcoord.last_commit_ts()");
	$node->poll_query_until('postgres', qq{
		SELECT (SELECT upper > $ts FROM mzcoord.maintenance_status WHERE name = 'public.v')
		    OR (SELECT ticks > $ticks FROM mzcoord.worker_status())})
	  or die 'neither a refresh nor a tick';
	my $caught = $node->safe_psql('postgres', qq{
		SELECT upper > $ts FROM mzcoord.maintenance_status WHERE name = 'public.v'});
	my $now = $node->safe_psql('postgres',
		'SELECT ticks FROM mzcoord.worker_status()');
	note "attempt $attempt: caught up $caught, ticks $ticks -> $now";
	if ($caught eq 't' && $now == $ticks)
	{
		$woken = 1;
		last;
	}
	# A regular tick came first; wait for the view, then try again.
	$node->poll_query_until('postgres', qq{
		SELECT upper > $ts FROM mzcoord.maintenance_status WHERE name = 'public.v'})
	  or die;
}
ok($woken, 'the view passes a write before the next regular tick');
is($node->safe_psql('postgres', 'SELECT n FROM v'),
	$node->safe_psql('postgres', 'SELECT count(*) FROM t'),
	'the view shows the writes');

is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'consistency checker clean');
$node->stop;
done_testing();
