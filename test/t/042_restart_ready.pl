# A restart is ready at once (issue 20): after an immediate stop during
# writes, with six collections and one view with a backlog, the
# coordinator reports running and the controller ready before the
# backlogged view has caught up: bootstrap waits for no maintenance, the
# maintenance workers work the backlog off behind it.  Asserted by order
# (the view's contents at the moment of readiness), never by time.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run ();

my $node = mzcoord_node('restartready', create_extension => 1);
$node->safe_psql('postgres', q{
	CREATE FUNCTION public.slowf(k int) RETURNS int IMMUTABLE LANGUAGE plpgsql
	  AS $$ BEGIN IF k > 0 THEN PERFORM pg_sleep(2); END IF; RETURN k; END $$;
	CREATE TABLE a (k int);
	CREATE TABLE b (k int);
	CREATE TABLE c (k int);
	CREATE TABLE d (k int);
	SELECT mzcoord.create_table('a');
	SELECT mzcoord.create_table('b');
	SELECT mzcoord.create_table('c');
	SELECT mzcoord.create_table('d');
	SELECT mzcoord.create_materialized_view('fast', 'SELECT count(*) AS n FROM a');
	SELECT mzcoord.create_materialized_view('backlog',
	  'SELECT count(*) AS n, sum(public.slowf(k)) AS s FROM b');
});
$node->poll_query_until('postgres', q{
	SELECT bool_and(upper >= inputs_upper) FROM mzcoord.maintenance_status
	 WHERE kind = 'materialized_view'}) or die 'views did not catch up';

# The backlog: eight writes, each a time the slow view must evaluate (at
# least 2 s each).
$node->safe_psql('postgres', "INSERT INTO b VALUES ($_)") for 1 .. 8;

# Writes in progress at the stop.
my $script = $node->basedir . '/load.sql';
{
	open my $fh, '>', $script or die $!;
	print $fh "INSERT INTO a VALUES ($_); INSERT INTO c VALUES ($_);\n"
	  for 1 .. 100000;
	close $fh;
}
my ($in, $out, $err) = ('', '', '');
my $h = IPC::Run::start(
	[ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-f', $script ],
	\$in, \$out, \$err);
$node->poll_query_until('postgres', 'SELECT count(*) > 50 FROM a') or die;
note 'the backlogged view shows ' . $node->safe_psql('postgres', 'SELECT n FROM backlog')
  . ' of 8 rows at the stop';
$node->stop('immediate');
$h->finish;

$node->start;
# Readiness: the coordinator runs and the controller is ready.
$node->poll_query_until('postgres', q{
	SELECT w.state = 'running' AND c.ready
	  FROM mzcoord.worker_status() w, mzcoord.controller_status() c})
  or die 'not ready';
my $at_ready = $node->safe_psql('postgres', 'SELECT n FROM backlog');
my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM b');
is($rows, '8', 'the backlog\'s writes survived');
cmp_ok($at_ready, '<', $rows, 'ready before the backlogged view caught up');

# The backlog is worked off behind it.
ok( $node->poll_query_until('postgres', q{
	SELECT n = 8 AND s = 36 FROM backlog}),
	'the backlogged view catches up');
ok( $node->poll_query_until('postgres', q{
	SELECT bool_and(upper >= inputs_upper) FROM mzcoord.maintenance_status
	 WHERE kind = 'materialized_view'}),
	'every view catches up');
is($node->safe_psql('postgres', 'SELECT n FROM fast'),
	$node->safe_psql('postgres', 'SELECT count(*) FROM a'), 'the other view is exact');
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'consistency checker clean');
$node->stop;
done_testing();
