# Compaction runs apart from the tick (issue 20): the compactor, a worker
# of its own, compacts histories; the coordinator only tells it which
# bounds moved.  A compaction that cannot go on now (here: a user's open
# transaction holds the row lock on the collection's mzcoord.storage row,
# where the compaction records its frontier) is put off, not waited for:
# the compactor goes on compacting the other collections, the ticks and
# the table timeline that strict reads wait on go on, and the collection
# is compacted once the lock goes.
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
	CREATE TABLE d (k int PRIMARY KEY, v int);
	INSERT INTO d SELECT g, 0 FROM generate_series(1, 100) g;
	SELECT mzcoord.create_table('d', '1 second');
});
my $gid = $node->safe_psql('postgres',
	q{SELECT global_id FROM mzcoord.storage WHERE relation = 'c'::regclass});
my $compacted0 = $node->safe_psql('postgres',
	qq{SELECT compacted FROM mzcoord.storage WHERE global_id = '$gid'});
my $d_compacted0 = $node->safe_psql('postgres',
	q{SELECT compacted FROM mzcoord.storage WHERE relation = 'd'::regclass});

is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'mzcoord compactor'}),
	'1', 'the coordinator started one compactor');

# A user's transaction holds the storage row the compaction records its
# compacted frontier in; the updates make a compaction due.
my $locker = $node->background_psql('postgres');
$locker->query_safe(qq{BEGIN;
	SELECT 1 FROM mzcoord.storage WHERE global_id = '$gid' FOR UPDATE});
$node->safe_psql('postgres', 'UPDATE c SET v = v + 1') for 1 .. 3;
my $hist = $node->safe_psql('postgres',
	qq{SELECT history FROM mzcoord.storage WHERE global_id = '$gid'});
$node->poll_query_until('postgres', qq{
	SELECT f.since > (SELECT max(ts) FROM $hist)
	  FROM mzcoord.frontiers f WHERE f.relation = 'c'::regclass})
  or die 'the since did not pass the updates';

# The compaction is due from now on: the compactor takes steps all the
# same, none of them waiting for the lock.
my $steps0 = $node->safe_psql('postgres',
	'SELECT steps FROM mzcoord.compaction_status()');
ok($node->poll_query_until('postgres',
	"SELECT steps >= $steps0 + 5 FROM mzcoord.compaction_status()"),
	'the compactor takes steps while the storage row is held');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_stat_activity
	 WHERE query = 'mzcoord compaction' AND wait_event_type = 'Lock'}),
	'0', 'no compaction waits for the lock');

# Another collection is compacted meanwhile; the held one is not.
$node->safe_psql('postgres', 'UPDATE d SET v = v + 1') for 1 .. 3;
ok($node->poll_query_until('postgres', qq{
	SELECT compacted > $d_compacted0 FROM mzcoord.storage
	 WHERE relation = 'd'::regclass}),
	'another collection is compacted while the storage row is held');
is($node->safe_psql('postgres',
	qq{SELECT compacted FROM mzcoord.storage WHERE global_id = '$gid'}),
	$compacted0, 'the held collection is not compacted yet');

# Meanwhile the coordinator ticks, and a write made now becomes readable
# at a strict read's time (the timeline moves).
my $ticks0 = $node->safe_psql('postgres', 'SELECT ticks FROM mzcoord.worker_status()');
ok($node->poll_query_until('postgres',
	"SELECT ticks >= $ticks0 + 5 FROM mzcoord.worker_status()"),
	'the coordinator ticks while the storage row is held');
$node->safe_psql('postgres', 'INSERT INTO c VALUES (1000, 1)');
is($node->safe_psql('postgres', q{
	BEGIN;
	SELECT count(*) FROM mzcoord.read_at(NULL::c,
	  mzcoord.select_timestamp(ARRAY['c']::regclass[], 'strict serializable')) x
	 WHERE x.k = 1000;
	COMMIT;}),
	'1', 'a strict read sees a write committed before it');

# The lock goes: the collection is compacted and its frontier recorded.
$locker->query_safe('COMMIT');
$locker->quit;
$node->poll_query_until('postgres', qq{
	SELECT compacted > $compacted0 FROM mzcoord.storage WHERE global_id = '$gid'})
  or die 'the collection was not compacted';
pass('the collection is compacted once the lock went');

# A history that someone holds so that it cannot be read (ALTER TABLE,
# VACUUM FULL, LOCK TABLE) when the compactor looks at it is looked at
# again later, not taken for one without retractions: that would leave it
# uncompacted until its next write.  The storage row is held first, so
# that the history cannot be compacted before it is held too, however
# slow the machine; the history is held until the tick has published the
# last bound that the updates make it publish and the compactor has looked
# at the history again since (its put-off is a second, by the timeline).
$node->safe_psql('postgres', q{
	CREATE TABLE e (k int PRIMARY KEY, v int);
	INSERT INTO e SELECT g, 0 FROM generate_series(1, 100) g;
	SELECT mzcoord.create_table('e', '1 second');
});
my ($e_gid, $e_hist, $e_compacted0) = split /\|/, $node->safe_psql('postgres',
	q{SELECT global_id, history, compacted FROM mzcoord.storage
	   WHERE relation = 'e'::regclass});
my $row_holder = $node->background_psql('postgres');
$row_holder->query_safe(qq{BEGIN;
	SELECT 1 FROM mzcoord.storage WHERE global_id = '$e_gid' FOR UPDATE});
$node->safe_psql('postgres', 'UPDATE e SET v = v + 1') for 1 .. 3;
my $e_last = $node->safe_psql('postgres', "SELECT max(ts) FROM $e_hist");
my $hist_holder = $node->background_psql('postgres');
$hist_holder->query_safe("BEGIN; LOCK TABLE $e_hist IN ACCESS EXCLUSIVE MODE");
$row_holder->query_safe('COMMIT');
$row_holder->quit;
$node->poll_query_until('postgres', qq{
	SELECT bound > $e_last FROM mzcoord.compaction_bounds WHERE global_id = '$e_gid'})
  or die 'the bound did not pass the updates';
my $e_upper = $node->safe_psql('postgres',
	q{SELECT upper FROM mzcoord.frontiers WHERE relation = 'e'::regclass});
$node->poll_query_until('postgres', qq{
	SELECT upper > $e_upper + 1500 FROM mzcoord.frontiers
	 WHERE relation = 'e'::regclass})
  or die 'the timeline did not move';
$steps0 = $node->safe_psql('postgres',
	'SELECT steps FROM mzcoord.compaction_status()');
$node->poll_query_until('postgres',
	"SELECT steps >= $steps0 + 3 FROM mzcoord.compaction_status()")
  or die 'the compactor took no steps';
is($node->safe_psql('postgres',
	qq{SELECT compacted FROM mzcoord.storage WHERE global_id = '$e_gid'}),
	$e_compacted0, 'a held history is not compacted');
$hist_holder->query_safe('COMMIT');
$hist_holder->quit;
ok($node->poll_query_until('postgres', qq{
	SELECT compacted > $e_last FROM mzcoord.storage WHERE global_id = '$e_gid'}),
	'a history held when the compactor looked is compacted once it is free');

is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency() is clean');

$node->stop;
done_testing();
