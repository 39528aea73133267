# Compaction runs apart from the tick (issue 20): the compactor, a worker
# of its own, compacts histories; the coordinator only tells it which
# bounds moved.  A compaction that cannot go on (here: it waits for the
# row lock a user's open transaction holds on the collection's
# mzcoord.storage row) does not stop the ticks, nor the table timeline
# that strict reads wait on; it finishes once the lock goes.
# No assertion is about durations: every wait is for a condition.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mzcoord_node('compactapart', create_extension => 1);

$node->safe_psql('postgres', q{
	CREATE TABLE c (k int PRIMARY KEY, v int);
	INSERT INTO c SELECT g, 0 FROM generate_series(1, 100) g;
	SELECT mzcoord.create_table('c', '1 second');
});
my $gid = $node->safe_psql('postgres',
	q{SELECT global_id FROM mzcoord.storage WHERE relation = 'c'::regclass});
my $compacted0 = $node->safe_psql('postgres',
	qq{SELECT compacted FROM mzcoord.storage WHERE global_id = '$gid'});

is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'mzcoord compactor'}),
	'1', 'the coordinator started one compactor');

# A user's transaction holds the storage row the compaction records its
# compacted frontier in; the updates make a compaction due.
my $locker = $node->background_psql('postgres');
$locker->query_safe(qq{BEGIN;
	SELECT 1 FROM mzcoord.storage WHERE global_id = '$gid' FOR UPDATE});
$node->safe_psql('postgres', 'UPDATE c SET v = v + 1') for 1 .. 3;

$node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE query = 'mzcoord compaction' AND wait_event_type = 'Lock'})
  or die 'the compaction did not start';
my $waiting = $node->safe_psql('postgres', q{
	SELECT backend_type || ' ' || pid || ' ' || query_start FROM pg_stat_activity
	 WHERE query = 'mzcoord compaction' AND wait_event_type = 'Lock'});
like($waiting, qr/^mzcoord compactor /, 'the compaction runs in the compactor');

# Meanwhile the coordinator ticks, and a write made now becomes readable
# at a strict read's time (the timeline moves).
my $ticks0 = $node->safe_psql('postgres', 'SELECT ticks FROM mzcoord.worker_status()');
ok($node->poll_query_until('postgres',
	"SELECT ticks >= $ticks0 + 5 FROM mzcoord.worker_status()"),
	'the coordinator ticks while the compaction waits');
$node->safe_psql('postgres', 'INSERT INTO c VALUES (1000, 1)');
is($node->safe_psql('postgres', q{
	BEGIN;
	SELECT count(*) FROM mzcoord.read_at(NULL::c,
	  mzcoord.select_timestamp(ARRAY['c']::regclass[], 'strict serializable')) x
	 WHERE x.k = 1000;
	COMMIT;}),
	'1', 'a strict read sees a write committed before it');
is($node->safe_psql('postgres', q{
	SELECT backend_type || ' ' || pid || ' ' || query_start FROM pg_stat_activity
	 WHERE query = 'mzcoord compaction' AND wait_event_type = 'Lock'}),
	$waiting, 'the same compaction still waits');

# The lock goes: the compaction finishes and records its frontier.
$locker->query_safe('COMMIT');
$locker->quit;
$node->poll_query_until('postgres', qq{
	SELECT compacted > $compacted0 FROM mzcoord.storage WHERE global_id = '$gid'})
  or die 'the compaction did not finish';
pass('the compaction finished once the lock went');

is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency() is clean');

$node->stop;
done_testing();
