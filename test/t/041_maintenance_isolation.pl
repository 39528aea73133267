# Maintenance is isolated (issue 20): steps run in maintenance workers.
#
# - One owner's view over an IMMUTABLE function that sleeps, and a sink
#   whose relation has a slow AFTER INSERT trigger, do not delay another
#   owner's view: while both slow steps are known to run (pg_stat_activity
#   shows them, and still the same ones afterwards), the other view's
#   upper passes the time of a write to its input.
# - The owner drops the slow view and the slow sink while their steps run:
#   the drops succeed (a generous statement_timeout detects a hang).
# - A step over mzcoord.maintenance_step_timeout is canceled, recorded in
#   maintenance_status (57014, naming the object and the limit) and
#   retried.
# No assertion is about durations: every wait is for a condition.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mzcoord_node('maintiso', create_extension => 1, conf => q{
mzcoord.max_maintenance_workers = 3
max_worker_processes = 16
});

$node->safe_psql('postgres', q{
	CREATE ROLE alice LOGIN;
	CREATE ROLE bob LOGIN;
	GRANT CREATE ON SCHEMA public TO alice, bob;
	-- Sleeps for a positive argument; IMMUTABLE, so a view may use it.
	CREATE FUNCTION public.slowf(k int) RETURNS int IMMUTABLE LANGUAGE plpgsql
	  AS $$ BEGIN IF k > 0 THEN PERFORM pg_sleep(600); END IF; RETURN k; END $$;
	CREATE FUNCTION public.slow_trigger() RETURNS trigger LANGUAGE plpgsql
	  AS $$ BEGIN PERFORM pg_sleep(600); RETURN NULL; END $$;
});
$node->safe_psql('postgres', q{
	SET ROLE alice;
	CREATE TABLE s (k int);
	SELECT mzcoord.create_table('s');
	SELECT mzcoord.create_materialized_view('slow_v', 'SELECT k, public.slowf(k) AS v FROM s');
	CREATE TABLE s2 (k int);
	SELECT mzcoord.create_table('s2');
	SELECT mzcoord.create_sink('slow_sink', 's2');
	CREATE TRIGGER slow AFTER INSERT ON slow_sink
	  FOR EACH ROW EXECUTE FUNCTION public.slow_trigger();
	CREATE TABLE s3 (k int);
	SELECT mzcoord.create_table('s3');
	SELECT mzcoord.create_materialized_view('slow_t', 'SELECT k, public.slowf(k) AS v FROM s3');
});
$node->safe_psql('postgres', q{
	SET ROLE bob;
	CREATE TABLE t (k int);
	SELECT mzcoord.create_table('t');
	SELECT mzcoord.create_materialized_view('fast_v', 'SELECT count(*) AS n FROM t');
});

sub gid_of
{
	my ($name) = @_;
	return $node->safe_psql('postgres',
		"SELECT id FROM mzcoord.items WHERE name = '$name'");
}

# The running step of an object: "pid query_start", or '' if none runs.
sub running_step
{
	my ($verb, $name) = @_;
	my $gid = gid_of($name);
	return $node->safe_psql('postgres', qq{
		SELECT pid || ' ' || query_start FROM pg_stat_activity
		 WHERE backend_type = 'mzcoord maintenance worker'
		   AND state = 'active' AND query = 'mzcoord $verb $gid'});
}

# Every view and sink caught up with its inputs.
$node->poll_query_until('postgres', q{
	SELECT bool_and(upper >= inputs_upper) FROM mzcoord.maintenance_status
	 WHERE kind IN ('materialized_view', 'sink')})
  or die 'views did not catch up';

# Start the slow steps.
$node->safe_psql('postgres', 'INSERT INTO s VALUES (1); INSERT INTO s2 VALUES (1)');
my ($slow_v, $slow_sink) = ('', '');
for (1 .. 600)
{
	$slow_v = running_step('refresh', 'slow_v');
	$slow_sink = running_step('export', 'slow_sink');
	last if $slow_v ne '' && $slow_sink ne '';
	select(undef, undef, undef, 0.1);
}
isnt($slow_v, '', 'the slow view\'s step runs');
isnt($slow_sink, '', 'the slow sink\'s step runs');

# Another owner's view follows a write while both run.
my $ts = $node->safe_psql('postgres',
	'INSERT INTO t VALUES (1); SELECT mzcoord.last_commit_ts()');
ok( $node->poll_query_until('postgres', qq{
	SELECT upper > $ts FROM mzcoord.maintenance_status WHERE name = 'public.fast_v'}),
	'the other owner\'s view passes the write');
is(running_step('refresh', 'slow_v'), $slow_v, 'the slow view\'s step was still running');
is(running_step('export', 'slow_sink'), $slow_sink, 'the slow sink\'s step was still running');
is($node->safe_psql('postgres', q{SELECT n FROM fast_v}), '1', 'the other view shows the write');

# The owner drops both while their steps run; nothing hangs.
my ($ret, $out, $err) = $node->psql('postgres', q{
	SET ROLE alice;
	SET statement_timeout = '30s';
	SELECT mzcoord.drop('slow_sink');
	SELECT mzcoord.drop('slow_v');
});
is($ret, 0, 'the owner drops the slow view and sink while their steps run');
is($err, '', 'without an error');
is(running_step('refresh', 'slow_v'), '', 'no step of the dropped view runs');

# A step over the timeout is canceled, recorded and retried.
$node->safe_psql('postgres',
	q{ALTER SYSTEM SET mzcoord.maintenance_step_timeout = '1s'});
$node->reload;
$node->poll_query_until('postgres', q{
	SELECT setting = '1000' FROM pg_settings
	 WHERE name = 'mzcoord.maintenance_step_timeout'}) or die;
# Each worker re-reads the setting before its next step; wait until all did.
$node->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM pg_stat_activity
	 WHERE backend_type = 'mzcoord maintenance worker' AND state = 'active'})
  or die 'workers stay busy';
$node->safe_psql('postgres', 'INSERT INTO s3 VALUES (1)');
ok( $node->poll_query_until('postgres', q{
	SELECT failures >= 2 FROM mzcoord.maintenance_status WHERE name = 'public.slow_t'}),
	'the step over the timeout fails and is retried');
my $row = $node->safe_psql('postgres', q{
	SELECT error_code || ' | ' || error FROM mzcoord.maintenance_status
	 WHERE name = 'public.slow_t'});
like($row, qr/^57014 \| refresh of materialized view public\.slow_t canceled: it ran longer than "mzcoord\.maintenance_step_timeout" \(1000 ms\)$/,
	'the cancel is recorded with the object and the limit');

# Bob's view still follows writes.
$ts = $node->safe_psql('postgres',
	'INSERT INTO t VALUES (2); SELECT mzcoord.last_commit_ts()');
ok( $node->poll_query_until('postgres', qq{
	SELECT upper > $ts FROM mzcoord.maintenance_status WHERE name = 'public.fast_v'}),
	'the other view keeps up during the retries');

$node->safe_psql('postgres', q{SET ROLE alice; SELECT mzcoord.drop('slow_t')});
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'consistency checker clean');

$node->stop;
done_testing();
