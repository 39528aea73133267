# The controller across crash restarts: it is rebuilt from the catalog, no
# since or upper regresses, the oracle never goes back, the holds of dead
# backends are gone, maintained holds come back, and until bootstrap has
# succeeded the functions that need the controller refuse with 57P03.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mzcoord_node('ctlrestart', create_extension => 1);
$node->safe_psql('postgres', q{
	CREATE TABLE t1 (a int);
	CREATE TABLE t2 (a int);
	CREATE TABLE t3 (a int);
});
$node->safe_psql('postgres', q{
	SELECT mzcoord.create_table('t1');
	SELECT mzcoord.create_table('t2', '1 hour');
	SELECT mzcoord.create_table('t3');
	SELECT mzcoord.create_index('t3_idx', 't3', ARRAY['a']);
});

# Let time pass so that sinces move, then hold t1 from a live session.
sleep 2;
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN');
my $held = $holder->query_safe(
	q{SELECT mzcoord.acquire_read_hold(ARRAY['t1'::regclass])});
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM mzcoord.holds WHERE holder_kind = 'transaction'}),
	'1', 'a live backend holds t1');

# Wait until the catalog has what the controller persisted.
$node->poll_query_until('postgres', q{
	SELECT bool_and(d.since = s.durable_since)
	  FROM mzcoord._durable_frontiers d
	  JOIN mzcoord._controller_collections() s USING (global_id)
	 WHERE s.durable_since IS NOT NULL})
  or die 'frontiers not persisted';

my $before = $node->safe_psql('postgres', q{
	SELECT string_agg(format('%s %s %s', global_id, since, upper), ',' ORDER BY global_id)
	  FROM mzcoord.frontiers});
my $oracle_before = $node->safe_psql('postgres',
	'SELECT oracle_read_ts FROM mzcoord.controller_status()');

# --- Crash --------------------------------------------------------------------
$node->stop('immediate');
eval { $holder->quit; };
$node->start;
$node->poll_query_until('postgres', 'SELECT ready FROM mzcoord.controller_status()')
  or die 'controller not ready after restart';
pass('controller bootstrapped after the crash');

is($node->safe_psql('postgres', 'SELECT bootstraps FROM mzcoord.controller_status()'),
	'1', 'shared memory was rebuilt');
my $oracle_after = $node->safe_psql('postgres',
	'SELECT oracle_read_ts FROM mzcoord.controller_status()');
cmp_ok($oracle_after, '>=', $oracle_before, 'the oracle did not go back');

my %after = map { my ($g, $s, $u) = split / /; ($g => [$s, $u]) }
  split /,/, $node->safe_psql('postgres', q{
	SELECT string_agg(format('%s %s %s', global_id, since, upper), ',' ORDER BY global_id)
	  FROM mzcoord.frontiers});
foreach my $row (split /,/, $before)
{
	my ($g, $s, $u) = split / /, $row;
	ok(exists $after{$g}, "collection $g is back");
	cmp_ok($after{$g}[0], '>=', $s, "since of $g did not regress");
	cmp_ok($after{$g}[1], '>=', $u, "upper of $g did not regress");
}

is($node->safe_psql('postgres',
		q{SELECT count(*) FROM mzcoord.holds WHERE holder_kind = 'transaction'}),
	'0', 'the holds of the dead backend are gone');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM mzcoord.holds
	 WHERE holder_kind = 'maintained' AND relation = 't3'::regclass}),
	'1', 'the index holds its input again');
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'consistent after the crash restart');

# The since of t1 moves on now that its holder is gone.
$node->poll_query_until('postgres', qq{
	SELECT since > $held FROM mzcoord.frontiers WHERE relation = 't1'::regclass})
  or die 'since of t1 stuck';
pass('since moves on without the dead holder');

# --- Bootstrap failure: not ready, and say so -------------------------------
# More collections than slots: 16 is the smallest mzcoord.max_collections,
# so fill the catalog beyond it first.
$node->safe_psql('postgres', join("\n",
	map { "CREATE TABLE f$_ (a int); SELECT mzcoord.create_table('f$_');" } 1 .. 14));
$node->append_conf('postgresql.conf', "mzcoord.max_collections = 16\n");
$node->restart;
$node->poll_query_until('postgres',
	q{SELECT bootstrap_error IS NOT NULL FROM mzcoord.controller_status()})
  or die 'bootstrap did not fail';
my ($ret, $out, $err) = $node->psql('postgres',
	q{\set VERBOSITY verbose
	  SET statement_timeout = '20s';
	  SELECT mzcoord.select_timestamp(ARRAY['t1'::regclass]);});
like($err, qr/57P03: the mzcoord controller is starting up/, 'functions refuse with 57P03');
like($err, qr/Bootstrap failed: .*collection slot/, 'and say why bootstrap failed');
like($node->safe_psql('postgres', 'SELECT last_error FROM mzcoord.worker_status()'),
	qr/could not load the catalog into shared memory/,
	'the worker status shows the bootstrap error');

$node->append_conf('postgresql.conf', "mzcoord.max_collections = 4096\n");
$node->restart;
$node->poll_query_until('postgres', 'SELECT ready FROM mzcoord.controller_status()')
  or die 'controller not ready with enough room';
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'consistent once the collections fit');

$node->stop;
done_testing();
