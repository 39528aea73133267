# Time across a failover and a crash restart (issue 22).
#
# The oracle's ceiling travels through WAL: a streaming standby replays
# every ceiling the primary raised, so once promoted it resumes above every
# timestamp the old primary handed out, even when the old primary's
# timeline ran far ahead of the wall clock (mzcoord.clock_offset, test
# only, puts one session an hour ahead; without it the promoted standby's
# own clock would hide a lost ceiling).  The write at that time is committed
# but not yet readable, so no published table upper records it: only the
# ceiling does.
#
#  1. primary + streaming standby (hot_standby_feedback on); a write an
#     hour ahead on the primary; the primary crashes (stop immediate); the
#     standby is promoted: a write on it gets a timestamp above the old
#     primary's, a strict read there sees both, the coordinator took a new
#     durable epoch and controller_status() shows it, check_consistency()
#     is clean.
#  2. after a crash restart the timeline resumes ahead of the clock (above
#     the ceiling) and keeps advancing from there: 20 sequential writes get
#     20 increasing timestamps, not one shared one.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $HOUR = 3_600_000;
my $NOW = q{(extract(epoch FROM clock_timestamp()) * 1000)::bigint};

# ---------------------------------------------------------------------------
# 1. Failover keeps time
# ---------------------------------------------------------------------------
my $primary = mzcoord_node('primary', allows_streaming => 1,
	create_extension => 1);
$primary->safe_psql('postgres', q{
	CREATE TABLE ft (a int, note text);
	SELECT mzcoord.create_table('ft', '1 day');
	INSERT INTO ft VALUES (1, 'before the backup');
});
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "hot_standby_feedback = on\n");
$standby->start;

$primary->safe_psql('postgres', q{INSERT INTO ft VALUES (2, 'streamed')});
my $old_epoch = $primary->safe_psql('postgres',
	'SELECT epoch FROM mzcoord.coordinator_epoch');

# One session runs an hour ahead: its write commits there.
my $ahead = $primary->safe_psql('postgres', qq{
	SET mzcoord.clock_offset = '1h';
	INSERT INTO ft VALUES (3, 'an hour ahead');
	SELECT mzcoord.last_commit_ts();
});
my $wall = $primary->safe_psql('postgres', "SELECT $NOW");
cmp_ok($ahead, '>', $wall + $HOUR - 60_000,
	'a write committed about an hour ahead of the clock');
my $readable = $primary->safe_psql('postgres',
	'SELECT oracle_read_ts FROM mzcoord.controller_status()');
cmp_ok($readable, '<', $ahead,
	'it is not readable yet: no published upper records its time');

$primary->wait_for_catchup($standby);
$primary->stop('immediate');
$standby->promote;
$standby->poll_query_until('postgres',
	'SELECT ready FROM mzcoord.controller_status()')
  or die 'the promoted standby never got ready';

my $after = $standby->safe_psql('postgres', q{
	INSERT INTO ft VALUES (4, 'after the failover');
	SELECT mzcoord.last_commit_ts();
});
cmp_ok($after, '>', $ahead,
	'a write on the promoted standby commits above every time the old primary handed out');

# A strict serializable read now sees every row, in timestamp order.
my $ts = $standby->safe_psql('postgres',
	q{SELECT mzcoord.select_timestamp(ARRAY['ft'::regclass])});
cmp_ok($ts, '>=', $after, 'a strict read after the write is at or after it');
is($standby->safe_psql('postgres', qq{
	SELECT string_agg(a::text, ',' ORDER BY a) FROM mzcoord.read_at(NULL::ft, $ts)}),
	'1,2,3,4', 'the read sees the rows of both primaries');
# (A timeout: where the time went back, that read would wait for the hour.)
is($standby->safe_psql('postgres', qq{
	SET statement_timeout = '30s';
	SELECT count(*) FROM mzcoord.read_at(NULL::ft, $ahead - 1)}),
	'2', 'just before the old primary\'s last write: the two rows before it');

# The epoch moved on at promotion, and controller_status() shows it.
my ($new_epoch, $shown) = split /\|/, $standby->safe_psql('postgres', q{
	SELECT e.epoch, s.epoch FROM mzcoord.coordinator_epoch e,
	       mzcoord.controller_status() s});
cmp_ok($new_epoch, '>', $old_epoch, 'the promoted coordinator took a newer epoch');
is($shown, $new_epoch, 'controller_status() reports the durable epoch');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency() is clean on the promoted standby');
$standby->stop;

# ---------------------------------------------------------------------------
# 2. After a crash restart, the timeline keeps advancing from where it resumes
# ---------------------------------------------------------------------------
my $node = mzcoord_node('restart', create_extension => 1);
$node->safe_psql('postgres', q{
	CREATE TABLE rt (a int);
	SELECT mzcoord.create_table('rt');
	INSERT INTO rt VALUES (0);
});
$node->stop('immediate');
$node->start;
$node->poll_query_until('postgres', 'SELECT ready FROM mzcoord.controller_status()')
  or die 'not ready after the restart';
my $script = join '', map {
	"INSERT INTO rt VALUES ($_);\nSELECT mzcoord.last_commit_ts();\nSELECT pg_sleep(0.01);\n"
} 1 .. 20;
my @ts = grep { /^\d+$/ } split /\n/,
  $node->safe_psql('postgres', $script);
is(scalar @ts, 20, '20 sequential writes after the restart');
my $increasing = 1;
for my $i (1 .. $#ts)
{
	$increasing = 0 if $ts[$i] <= $ts[$i - 1];
}
ok($increasing, 'each got a later timestamp than the one before: '
	  . "$ts[0] .. $ts[-1]");
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency() is clean after the restart');
$node->stop;

done_testing();
