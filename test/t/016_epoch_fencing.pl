# Epoch fencing of the coordinator's publication (issue 11).  Every
# coordinator start takes a new durable epoch (mzcoord.coordinator_epoch);
# before each publication the coordinator locks the epoch row and compares
# it with its own.  Here a superuser advances the epoch behind the running
# coordinator's back: its next publication must write nothing (no bound row
# is stamped with the old epoch after the advance), it must exit with a
# clear line in the log, and a new coordinator must start with a newer
# epoch and publish under it.  check_consistency() is clean throughout.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mzcoord_node('fencing', create_extension => 1);
$node->safe_psql('postgres', q{
	CREATE TABLE f1 (a int);
	CREATE TABLE f2 (a int);
	SELECT mzcoord.create_table('f1');
	SELECT mzcoord.create_table('f2');
});

# The running coordinator's epoch shows on the bounds it publishes.
my $old = $node->safe_psql('postgres', 'SELECT epoch FROM mzcoord.coordinator_epoch');
ok($old >= 1, "the coordinator took epoch $old");
$node->poll_query_until('postgres', qq{
	SELECT bool_and(epoch = $old) FROM mzcoord.compaction_bounds})
  or die 'bounds not published under the coordinator epoch';
my $old_pid = $node->safe_psql('postgres',
	'SELECT pid FROM mzcoord.coordinator_epoch');

# Keep the table timeline moving so that every tick has bounds to publish.
my $writer = $node->background_psql('postgres');
$writer->query_safe(q{INSERT INTO f1 VALUES (1)});

# A superuser advances the epoch: the running coordinator is now stale.
my $logpos = -s $node->logfile;
my $bumped_at = $node->safe_psql('postgres', q{
	UPDATE mzcoord.coordinator_epoch SET epoch = epoch + 1
	RETURNING (extract(epoch FROM clock_timestamp()) * 1e6)::bigint});
my $bumped = $old + 1;

ok($node->wait_for_log(qr/fenced: epoch $old superseded by epoch $bumped, exiting without publishing/, $logpos),
	'the stale coordinator exits with a clear log line');

# A new coordinator starts and takes an epoch above the advanced one.
$node->poll_query_until('postgres', qq{
	SELECT epoch > $bumped AND pid <> $old_pid FROM mzcoord.coordinator_epoch})
  or die 'no new coordinator epoch';
my $new = $node->safe_psql('postgres', 'SELECT epoch FROM mzcoord.coordinator_epoch');
ok($new > $bumped, "a new coordinator took epoch $new");

# Nothing was published under the old epoch after the advance.
is($node->safe_psql('postgres', qq{
	SELECT count(*) FROM mzcoord.compaction_bounds
	 WHERE epoch <= $old
	   AND (extract(epoch FROM published_at) * 1e6)::bigint > $bumped_at}),
	'0', 'the stale coordinator wrote no bound after the advance');

# The new coordinator publishes under its epoch, and bounds keep moving.
# (Only the written table's: f2, idle, keeps the bound an older coordinator
# published, since nothing above it needs compacting.)
my $f1_bound = $node->safe_psql('postgres', q{
	SELECT bound FROM mzcoord.compaction_bounds b JOIN mzcoord.items i ON i.id = b.global_id
	 WHERE i.name = 'f1'});
$writer->query_safe(q{INSERT INTO f1 VALUES (2)});
$node->poll_query_until('postgres', qq{
	SELECT b.epoch = $new AND b.bound > $f1_bound
	  FROM mzcoord.compaction_bounds b JOIN mzcoord.items i ON i.id = b.global_id
	 WHERE i.name = 'f1'})
  or die 'the new coordinator does not publish';
pass('the new coordinator publishes under its epoch');

is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency() is clean');

# The epoch row is guarded; a superuser who disables the guard and deletes
# it stops the coordinator, whose start then says what is wrong and how to
# repair it (issue 19).  The hinted repair lets the next start succeed.
# Every write is published at the next tick from here on, so that the
# next publication, which finds the row gone, follows the write below.
$node->safe_psql('postgres', q{ALTER SYSTEM SET mzcoord.publish_interval = 0});
$node->reload;
$node->poll_query_until('postgres', q{SELECT current_setting('mzcoord.publish_interval') = '0'})
  or die 'publish_interval not reloaded';
$logpos = -s $node->logfile;
$node->safe_psql('postgres', q{
	ALTER TABLE mzcoord.coordinator_epoch DISABLE TRIGGER coordinator_epoch_guard;
	DELETE FROM mzcoord.coordinator_epoch;
	ALTER TABLE mzcoord.coordinator_epoch ENABLE ALWAYS TRIGGER coordinator_epoch_guard;
});
$writer->query_safe(q{INSERT INTO f1 VALUES (3)});
ok($node->wait_for_log(qr/the coordinator epoch is missing/, $logpos),
	'a start without the epoch row says so');
ok($node->log_contains(qr/HINT:  .*INSERT INTO mzcoord\.coordinator_epoch \(epoch\) SELECT coalesce\(max\(epoch\), 0\) FROM mzcoord\.compaction_bounds/, $logpos),
	'and names the repair');
$node->safe_psql('postgres', q{
	INSERT INTO mzcoord.coordinator_epoch (epoch)
	SELECT coalesce(max(epoch), 0) FROM mzcoord.compaction_bounds});
$node->poll_query_until('postgres', qq{
	SELECT epoch > $new AND pid IS NOT NULL FROM mzcoord.coordinator_epoch})
  or die 'no coordinator start after the repair';
pass('after the repair a coordinator starts with a newer epoch');

$writer->quit;
$node->stop;
done_testing();
