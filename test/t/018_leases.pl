# Leases across crash restarts and clean restarts: the coordinator's
# bootstrap re-installs the protection of active leases from
# mzcoord.lease_records before the controller is ready, so no since passes
# a lease and a read at its time returns the same rows; expired leases stay
# expired and protect nothing.
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

# Write load while the policy would move the since on, then crash.
$node->safe_psql('postgres', q{
	UPDATE lt SET v = v || '+' WHERE k <= 10;
	DELETE FROM lt WHERE k > 15;
	INSERT INTO lt SELECT g, 'new' FROM generate_series(100, 120) g;
});
my $writer = $node->background_psql('postgres', on_error_stop => 0);
$writer->query_until(qr/started/, q{
	\echo started
	DO $$ BEGIN FOR i IN 1..200 LOOP
	    UPDATE lt SET v = v || '.' WHERE k = 2;
	    COMMIT;
	    PERFORM pg_sleep(0.01);
	END LOOP; END $$;
});
$node->poll_query_until('postgres', qq{
	SELECT behind_policy_ms > 1500 FROM mzcoord.leases WHERE name = 'export'})
  or die;
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

# The short lease expires; it stays expired across a restart and holds
# nothing.
$node->poll_query_until('postgres', q{
	SELECT state = 'expired' FROM mzcoord.leases WHERE name = 'short'}) or die;
$node->restart;
$node->poll_query_until('postgres',
	q{SELECT ready FROM mzcoord.controller_status()}) or die;
is($node->safe_psql('postgres',
		q{SELECT string_agg(name || ' ' || state, ', ' ORDER BY name) FROM mzcoord.leases}),
	'export active, short expired', 'both leases are back, the short one expired');
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
$node->poll_query_until('postgres', qq{
	SELECT since > $held FROM mzcoord.frontiers WHERE relation = 'lt'::regclass})
  or die;
pass('dropping the lease releases it');
is($node->safe_psql('postgres', q{SELECT count(*) FROM mzcoord.check_consistency()}),
	'0', 'consistent');

$node->stop;
done_testing();
