# Leases across crash restarts and clean restarts: the coordinator's
# bootstrap re-installs the protection of active leases from
# mzcoord.lease_records before the controller is ready, so no since passes
# a lease and a read at its time returns the same rows; expired leases stay
# expired and protect nothing.  Leases on a materialized view (its own
# history) and on an index (the relation it indexes) come back the same way.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mzcoord_node('leases', create_extension => 1,
	conf => "mzcoord.publish_interval = 0\n");
$node->safe_psql('postgres', q{
	CREATE TABLE lt (k int, v text);
	INSERT INTO lt SELECT g, 'v' || g FROM generate_series(1, 20) g;
	SELECT mzcoord.create_table('lt', '1 second');
	CREATE TABLE lt_short (k int);
	SELECT mzcoord.create_table('lt_short', '1 second');
	CREATE TABLE lw (k int, v text);
	INSERT INTO lw SELECT g, 'w' || g FROM generate_series(1, 5) g;
	SELECT mzcoord.create_table('lw', '1 second');
	SELECT mzcoord.create_materialized_view('lw_mv', 'SELECT k, v FROM lw', '1 second');
	CREATE TABLE lx (k int, v text);
	INSERT INTO lx SELECT g, 'x' || g FROM generate_series(1, 5) g;
	SELECT mzcoord.create_table('lx', '1 second');
	SELECT mzcoord.create_index('lx_idx', 'lx', ARRAY['k']);
});

# Let the since (1 second behind) pass the initial rows, then lease.
sleep 1.5;
my $held = $node->safe_psql('postgres',
	q{SELECT mzcoord.create_lease('export', ARRAY['lt'::regclass], NULL, '1 hour')});
my $short = $node->safe_psql('postgres',
	q{SELECT mzcoord.create_lease('short', ARRAY['lt_short'::regclass], NULL, '2 seconds')});
my $read = "SELECT string_agg(k || ':' || v, ',' ORDER BY k, v)"
  . " FROM mzcoord.read_at(NULL::lt, $held)";
my $before = $node->safe_psql('postgres', $read);
ok($before ne '', 'a read at the lease time has rows');
my $view_held = $node->safe_psql('postgres',
	q{SELECT mzcoord.create_lease('view', ARRAY['lw_mv'::regclass], NULL, '1 hour')});
my $index_held = $node->safe_psql('postgres',
	q{SELECT mzcoord.create_lease('index', ARRAY['lx_idx'::regclass], NULL, '1 hour')});
my $read_view = "SELECT string_agg(k || ':' || v, ',' ORDER BY k, v)"
  . " FROM mzcoord.read_at(NULL::lw_mv, $view_held)";
my $read_indexed = "SELECT string_agg(k || ':' || v, ',' ORDER BY k, v)"
  . " FROM mzcoord.read_at(NULL::lx, $index_held)";
my $view_before = $node->safe_psql('postgres', $read_view);
my $indexed_before = $node->safe_psql('postgres', $read_indexed);
is($view_before, '1:w1,2:w2,3:w3,4:w4,5:w5', 'a read of the view at its lease time');
is($indexed_before, '1:x1,2:x2,3:x3,4:x4,5:x5',
	'a read of the indexed table at the index lease time');

# Write load while the policy would move the since on, then crash.
$node->safe_psql('postgres', q{
	UPDATE lt SET v = v || '+' WHERE k <= 10;
	DELETE FROM lt WHERE k > 15;
	INSERT INTO lt SELECT g, 'new' FROM generate_series(100, 120) g;
	UPDATE lw SET v = v || '+';
	DELETE FROM lw WHERE k = 1;
	UPDATE lx SET v = v || '+';
	DELETE FROM lx WHERE k = 1;
});
my $writer = $node->background_psql('postgres', on_error_stop => 0);
$writer->query_until(qr/started/, q{
	\echo started
	DO $$ BEGIN FOR i IN 1..200 LOOP
	    UPDATE lt SET v = v || '.' WHERE k = 2;
	    UPDATE lw SET v = v || '.' WHERE k = 2;
	    UPDATE lx SET v = v || '.' WHERE k = 2;
	    COMMIT;
	    PERFORM pg_sleep(0.01);
	END LOOP; END $$;
});
$node->poll_query_until('postgres', qq{
	SELECT bool_and(behind_policy_ms > 1500) FROM mzcoord.leases
	 WHERE name IN ('export', 'view', 'index')})
  or die;
is($node->safe_psql('postgres', q{
	SELECT string_agg(relation::text || ' ' || since, ',' ORDER BY relation::text)
	  FROM mzcoord.frontiers WHERE relation IN ('lw_mv'::regclass, 'lx_idx'::regclass)}),
	"lw_mv $view_held,lx_idx $index_held",
	'the view and the index stop at their leases before the crash');
is($node->safe_psql('postgres',
		q{SELECT since FROM mzcoord.frontiers WHERE relation = 'lt'::regclass}),
	$held, 'the since stops at the lease before the crash');
$node->stop('immediate');
eval { $writer->quit; };
$node->start;
$node->poll_query_until('postgres',
	q{SELECT ready FROM mzcoord.controller_status()}) or die;

is($node->safe_psql('postgres',
		q{SELECT state || ' ' || held_at FROM mzcoord.leases WHERE name = 'export'}),
	"active $held", 'the lease is still there and active after the crash');
is($node->safe_psql('postgres', qq{
		SELECT since <= $held FROM mzcoord.frontiers WHERE relation = 'lt'::regclass}),
	't', 'the since did not pass the lease');
is($node->safe_psql('postgres', $read), $before,
	'the read at the lease time gives the same rows after the crash');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM mzcoord.holds
		   WHERE holder_kind = 'lease' AND relation = 'lt'::regclass}),
	'1', 'the lease holds again');

# The view and the index: the tick has run since the restart (an unleased
# table's since passed a write made after it) and their leases still hold.
my $after_restart = $node->safe_psql('postgres',
	q{INSERT INTO lt_short VALUES (1); SELECT mzcoord.last_commit_ts()});
$node->poll_query_until('postgres', qq{
	SELECT since > $after_restart FROM mzcoord.frontiers
	 WHERE relation = 'lt_short'::regclass}) or die;
is($node->safe_psql('postgres', qq{
	SELECT string_agg(relation::text || ' ' || (since <= CASE relation
	           WHEN 'lw_mv'::regclass THEN $view_held ELSE $index_held END),
	       ',' ORDER BY relation::text)
	  FROM mzcoord.frontiers
	 WHERE relation IN ('lw_mv'::regclass, 'lx'::regclass, 'lx_idx'::regclass)}),
	'lw_mv true,lx true,lx_idx true',
	'after the crash the view, the index and its table are held at the leases');
is($node->safe_psql('postgres', q{
	SELECT string_agg(relation::text, ',' ORDER BY relation::text)
	  FROM mzcoord.holds WHERE holder_kind = 'lease'}),
	'lt,lw_mv,lx_idx', 'the view and index leases hold again');
$node->safe_psql('postgres', q{SELECT mzcoord.compact('lw_mv'); SELECT mzcoord.compact('lx')});
is($node->safe_psql('postgres', $read_view), $view_before,
	'the read of the view at its lease time is unchanged after the crash');
is($node->safe_psql('postgres', $read_indexed), $indexed_before,
	'the read of the indexed table at the index lease time is unchanged after the crash');

# The short lease expires; it stays expired across a restart and holds
# nothing.
$node->poll_query_until('postgres', q{
	SELECT state = 'expired' FROM mzcoord.leases WHERE name = 'short'}) or die;
$node->restart;
$node->poll_query_until('postgres',
	q{SELECT ready FROM mzcoord.controller_status()}) or die;
is($node->safe_psql('postgres',
		q{SELECT string_agg(name || ' ' || state, ', ' ORDER BY name) FROM mzcoord.leases}),
	'export active, index active, short expired, view active',
	'the leases are back, the short one expired');
$node->poll_query_until('postgres', qq{
	SELECT since > $short FROM mzcoord.frontiers WHERE relation = 'lt_short'::regclass})
  or die;
pass('the since of the expired lease moved on');
is($node->safe_psql('postgres', $read), $before,
	'after a clean restart the read at the lease time is unchanged');
is($node->safe_psql('postgres', qq{
		SELECT since <= $held FROM mzcoord.frontiers WHERE relation = 'lt'::regclass}),
	't', 'the since still does not pass the lease');

# Dropping it lets the since move on.
$node->safe_psql('postgres', q{SELECT mzcoord.drop_lease('export')});
$node->safe_psql('postgres', q{SELECT mzcoord.drop_lease('view')});
$node->safe_psql('postgres', q{SELECT mzcoord.drop_lease('index')});
$node->poll_query_until('postgres', qq{
	SELECT bool_and(since > CASE relation WHEN 'lw_mv'::regclass THEN $view_held
	                                      ELSE $index_held END)
	  FROM mzcoord.frontiers
	 WHERE relation IN ('lw_mv'::regclass, 'lx'::regclass, 'lx_idx'::regclass)})
  or die;
pass('dropping the view and index leases releases them');
$node->poll_query_until('postgres', qq{
	SELECT since > $held FROM mzcoord.frontiers WHERE relation = 'lt'::regclass})
  or die;
pass('dropping the lease releases it');
is($node->safe_psql('postgres', q{SELECT count(*) FROM mzcoord.check_consistency()}),
	'0', 'consistent');

$node->stop;
done_testing();
