# Replacing a materialized view's definition in place (issue 23), with
# concurrent writers, a reader holding an old time, and crashes.
#
#  1. a view rv over table rt, a view over rv, a replacement reading rt and
#     a table rt2 created after rv (a younger input); writers keep writing
#     rt and rt2 in another session throughout;
#  2. a reader holds a time below the swap (select_timestamp in an open
#     transaction) and reads rv there;
#  3. the server crashes at the failpoint just before the swap commits:
#     after the restart rv has its old definition and history, the
#     replacement is still there, and rv keeps refreshing;
#  4. the swap commits at T while the writers write: the held reader reads
#     identical rows at its time; rv answers the old definition before T
#     (equal to the old query evaluated on rt's history) and the new one
#     from T on (the new query on rt and rt2's histories); the view over rv
#     follows;
#  5. the server crashes (immediate) right after the swap committed: after
#     the restart rv keeps the new definition, its inputs and its history,
#     refreshes from rt2's new writes, and check_consistency() is clean.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mzcoord_node('replacement', create_extension => 1);
$node->safe_psql('postgres', q{
	CREATE TABLE rt (k int, v int);
	INSERT INTO rt SELECT g, g * 10 FROM generate_series(1, 10) g;
	SELECT mzcoord.create_table('rt', '1 hour');
	SELECT mzcoord.create_materialized_view('rv', 'SELECT k, v FROM rt WHERE k % 2 = 0', '1 hour');
	SELECT mzcoord.create_materialized_view('rv_over', 'SELECT count(*) AS n, sum(v) AS s FROM rv', '1 hour');
	CREATE TABLE rt2 (k int, w int);
	INSERT INTO rt2 SELECT g, g FROM generate_series(1, 10) g;
	SELECT mzcoord.create_table('rt2', '1 hour');
	SELECT mzcoord.create_replacement('rv', 'rv_next',
		'SELECT rt.k, rt.v + rt2.w AS v FROM rt JOIN rt2 ON rt2.k = rt.k WHERE rt.k % 2 = 1');
});
my $oid = $node->safe_psql('postgres', q{SELECT 'rv'::regclass::oid});

# Writers in another session, throughout.
my $writer;
sub start_writer
{
	$writer = $node->background_psql('postgres', on_error_stop => 0);
	$writer->query_until(qr/started/, q{
		\echo started
		DO $$ BEGIN FOR i IN 1..100000 LOOP
		    UPDATE rt SET v = v + 1 WHERE k = 1 + i % 10;
		    COMMIT;
		    UPDATE rt2 SET w = w + 1 WHERE k = 1 + (i * 7) % 10;
		    COMMIT;
		    PERFORM pg_sleep(0.02);
		END LOOP; END $$;
	});
}
start_writer();

# The old and new definitions, evaluated on the tables' histories at t.
sub old_at
{
	my ($t) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT string_agg(k || ':' || v, ',' ORDER BY k, v)
		  FROM mzcoord.read_at(NULL::rt, $t) WHERE k % 2 = 0});
}
sub new_at
{
	my ($t) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT string_agg(a.k || ':' || (a.v + b.w), ',' ORDER BY a.k, a.v + b.w)
		  FROM mzcoord.read_at(NULL::rt, $t) a
		  JOIN mzcoord.read_at(NULL::rt2, $t) b ON b.k = a.k WHERE a.k % 2 = 1});
}
sub view_at
{
	my ($rel, $t) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT string_agg(k || ':' || v, ',' ORDER BY k, v) FROM mzcoord.read_at(NULL::$rel, $t)});
}
sub wait_upper
{
	my ($rel, $t) = @_;
	$node->poll_query_until('postgres', qq{
		SELECT upper > $t FROM mzcoord.frontiers WHERE relation = '$rel'::regclass})
	  or die "$rel did not pass $t";
}
sub now_ts
{
	return $node->safe_psql('postgres',
		q{SELECT mzcoord.select_timestamp(ARRAY['rt'::regclass, 'rt2'::regclass])});
}

# ---------------------------------------------------------------------------
# 3. A crash just before the swap commits leaves the old definition
# ---------------------------------------------------------------------------
my $t0 = now_ts();
wait_upper('rv', $t0);
wait_upper('rv_next', $t0);
my $logpos = -s $node->logfile;
$node->psql('postgres', q{
	SET mzcoord.failpoint = 'replacement_before_commit';
	SELECT mzcoord.apply_replacement('rv_next');});
ok($node->wait_for_log(qr/failpoint "replacement_before_commit" reached/, $logpos),
	'the swap reached the failpoint before its commit');
eval { $writer->quit; };
$node->poll_query_until('postgres', q{SELECT ready FROM mzcoord.controller_status()})
  or die;
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM mzcoord.replacements r JOIN mzcoord.items i ON i.id = r.item_id
	 WHERE i.name = 'rv_next'}), '1', 'after the crash the replacement is still there');
is($node->safe_psql('postgres', q{SELECT count(*) FROM mzcoord.replaced_definitions}),
	'0', 'and rv has its one definition');
is(view_at('rv', $t0), old_at($t0), 'rv at an earlier time is the old query');
start_writer();
my $t1 = now_ts();
wait_upper('rv', $t1);
is(view_at('rv', $t1), old_at($t1), 'rv keeps refreshing with the old definition');

# ---------------------------------------------------------------------------
# 2 and 4. A reader holds a time below the swap; the swap commits
# ---------------------------------------------------------------------------
my $reader = $node->background_psql('postgres');
$reader->query_safe('BEGIN');
my $tr = $reader->query_safe(
	q{SELECT mzcoord.select_timestamp(ARRAY['rv'::regclass, 'rv_over'::regclass], 'serializable')});
$tr =~ s/\s+//g;
my $reader_sql = "SELECT string_agg(k || ':' || v, ',' ORDER BY k, v) FROM mzcoord.read_at(NULL::rv, $tr)";
my $held_rows = $reader->query_safe($reader_sql);
my $over_held = $reader->query_safe(
	"SELECT n || ':' || s FROM mzcoord.read_at(NULL::rv_over, $tr)");

my $swap = $node->safe_psql('postgres', q{SELECT mzcoord.apply_replacement('rv_next')});
ok($swap > $tr, "the swap time $swap is after the reader's time $tr");
is($node->safe_psql('postgres', q{SELECT 'rv'::regclass::oid}), $oid, 'rv keeps its relation');
is($reader->query_safe($reader_sql), $held_rows,
	'the reader holding an earlier time reads identical rows after the swap');
$reader->query_safe('COMMIT');
$reader->quit;

my $t2 = now_ts();
wait_upper('rv', $t2);
wait_upper('rv_over', $t2);
is(view_at('rv', $swap - 1), old_at($swap - 1), 'just before the swap: the old query');
is(view_at('rv', $swap), new_at($swap), 'at the swap: the new query');
is(view_at('rv', $t2), new_at($t2), 'after more writes: the new query');
is($node->safe_psql('postgres',
		"SELECT n || ':' || s FROM mzcoord.read_at(NULL::rv_over, $tr)"),
	$over_held, 'the view over rv is unchanged at the held time');
is($node->safe_psql('postgres', qq{
		SELECT (SELECT n || ':' || s FROM mzcoord.read_at(NULL::rv_over, $t2))
		     = (SELECT count(*) || ':' || sum(v) FROM mzcoord.read_at(NULL::rv, $t2))}),
	't', 'the view over rv follows the new definition');

# ---------------------------------------------------------------------------
# 5. A crash right after the swap committed keeps the new definition
# ---------------------------------------------------------------------------
$node->stop('immediate');
eval { $writer->quit; };
$node->start;
$node->poll_query_until('postgres', q{SELECT ready FROM mzcoord.controller_status()})
  or die;
is($node->safe_psql('postgres', q{
	SELECT string_agg(i2.name, ',' ORDER BY i2.name)
	  FROM mzcoord.item_inputs ii JOIN mzcoord.items i ON i.id = ii.item_id
	  JOIN mzcoord.items i2 ON i2.id = ii.input_item_id WHERE i.name = 'rv'}),
	'rt,rt2', 'after the crash rv reads the new inputs');
is($node->safe_psql('postgres', q{SELECT count(*) FROM mzcoord.versions WHERE name = 'rv'}),
	'2', 'both definitions are recorded');
is(view_at('rv', $swap - 1), old_at($swap - 1), 'before the swap: still the old query');
is(view_at('rv', $swap), new_at($swap), 'at the swap: still the new query');
$node->safe_psql('postgres', q{UPDATE rt2 SET w = w + 1000 WHERE k = 3});
my $t3 = now_ts();
wait_upper('rv', $t3);
is(view_at('rv', $t3), new_at($t3), 'rv refreshes from the younger input after the restart');
my ($v3) = view_at('rv', $t3) =~ /(?:^|,)3:(\d+)/;
ok(defined $v3 && $v3 > 1000, 'the write to the new input shows');
is($node->safe_psql('postgres', q{SELECT count(*) FROM mzcoord.check_consistency()}),
	'0', 'consistent');

$node->stop;
done_testing();
