# A standby reader's time is held on the primary (issue 22).
#
# A transaction on a hot standby that selected a time (select_timestamp,
# serializable, in a transaction block) holds it there; the standby's lease
# keeper keeps one lease on the primary at the least held time, so the
# primary's since and compaction stop there while its retain-history policy
# (1 second) and its writes would move them on.
#
#  1. the reader holds T: the lease appears on the primary at or below T;
#     the primary's writes go on for longer than the retain-history window,
#     and another table with the same policy moves past T, but the held
#     table's since and compacted frontier stay at or below T; the reader's
#     reads at T on the standby give identical rows throughout;
#  2. the reader commits: the lease goes, and the since moves past T;
#  3. a reader holds again and the standby stops (immediate): the lease
#     expires after mzcoord.standby_lease_ttl and the since moves on;
#  4. check_consistency() is clean on the primary.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = mzcoord_node('primary', allows_streaming => 1,
	create_extension => 1);
$primary->safe_psql('postgres', q{
	CREATE TABLE kt (k int, v text);
	CREATE TABLE other (k int, v text);
	INSERT INTO kt SELECT g, 'v' || g FROM generate_series(1, 5) g;
	INSERT INTO other SELECT g, 'v' || g FROM generate_series(1, 5) g;
	SELECT mzcoord.create_table('kt');
	SELECT mzcoord.create_table('other');
});
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf',
	"hot_standby_feedback = on\nmzcoord.standby_lease_ttl = 5\n");
$standby->start;
$primary->wait_for_catchup($standby);

my $contents = q{SELECT string_agg(k || ':' || v, ' ' ORDER BY k, v)
	FROM mzcoord.read_at(NULL::kt, %s)};
my $lease_sql = q{SELECT count(*) FROM mzcoord.leases
	WHERE name LIKE 'mzcoord standby %%' AND state = 'active' AND held_at <= %s
	  AND 'kt'::regclass = ANY (relations)};

# Writes on the primary, a few per second, for secs seconds.
sub write_for
{
	my ($secs) = @_;
	foreach my $i (1 .. $secs * 4)
	{
		$primary->safe_psql('postgres', qq{
			UPDATE kt SET v = v || '+' WHERE k = 1 + $i % 5;
			UPDATE other SET v = v || '+' WHERE k = 1 + $i % 5;});
		Time::HiRes::sleep(0.25);
	}
}
use Time::HiRes ();

# Wait until no standby lease is active on the primary.
sub no_standby_lease
{
	my ($what) = @_;
	ok($primary->poll_query_until('postgres',
		q{SELECT count(*) FROM mzcoord.leases WHERE name LIKE 'mzcoord standby %' AND state = 'active'}, '0'),
		$what);
}

# After more writes, wait until kt's since passes $t.
sub since_passes
{
	my ($t, $what) = @_;
	write_for(1);
	ok($primary->poll_query_until('postgres', qq{
		SELECT since > $t FROM mzcoord.frontiers WHERE relation = 'kt'::regclass}), $what);
}

# ---------------------------------------------------------------------------
# 1. A standby reader's time is held on the primary
# ---------------------------------------------------------------------------
my $reader = $standby->background_psql('postgres');
$reader->query_safe('BEGIN');
my $t = $reader->query_safe(
	q{SELECT mzcoord.select_timestamp(ARRAY['kt'::regclass], 'serializable')});
$t =~ s/\s+//g;
my $before = $reader->query_safe(sprintf($contents, $t));
ok($primary->poll_query_until('postgres', sprintf($lease_sql, $t), '1'),
	"the standby's lease holds kt at or below the reader's time $t on the primary");

write_for(3);
ok($primary->poll_query_until('postgres', qq{
	SELECT since > $t + 1000 FROM mzcoord.frontiers WHERE relation = 'other'::regclass}),
	'another table with the same policy moved more than a second past the held time');
is($primary->safe_psql('postgres', qq{
	SELECT since <= $t FROM mzcoord.frontiers WHERE relation = 'kt'::regclass}),
	't', "the held table's since stays at or below the reader's time");
is($primary->safe_psql('postgres', qq{
	SELECT compacted <= $t FROM mzcoord.storage WHERE relation = 'kt'::regclass}),
	't', "its history is not compacted past the reader's time");
$primary->wait_for_catchup($standby);
is($reader->query_safe(sprintf($contents, $t)), $before,
	'the reader reads identical rows at its time after the writes');

# ---------------------------------------------------------------------------
# 2. The reader ends: the lease goes, the since moves on
# ---------------------------------------------------------------------------
$reader->query_safe('COMMIT');
no_standby_lease('the lease is dropped once the reader commits');
since_passes($t, 'the since moves past the time once nothing holds it');

# ---------------------------------------------------------------------------
# 3. The standby goes away: the lease expires
# ---------------------------------------------------------------------------
$reader->query_safe('BEGIN');
my $t2 = $reader->query_safe(
	q{SELECT mzcoord.select_timestamp(ARRAY['kt'::regclass], 'serializable')});
$t2 =~ s/\s+//g;
ok($primary->poll_query_until('postgres', sprintf($lease_sql, $t2), '1'),
	'a new hold gets a lease again');
$standby->stop('immediate');
eval { $reader->quit };
no_standby_lease('the lease of the stopped standby expires');
since_passes($t2, 'the since moves on after the standby is gone');

is($primary->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency() is clean on the primary');
$primary->stop;
done_testing();
