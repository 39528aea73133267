# Sinks export exactly once across crashes (issue 12).
#
# A writer keeps changing a table while the coordinator exports it into two
# sinks (with and without a snapshot).  The server crashes in the middle of
# exports: at the failpoints export_before_upper (the rows are written,
# the upper is not) and export_before_commit (both written, not
# committed), and by an immediate stop at an arbitrary moment.  After each
# restart the sinks go on; at the end, once they have caught up with the
# table, each sink's rows are exactly the table's history from the sink's
# as-of to its upper (its contents at the as-of, then its consolidated
# updates, from read_at and changes()): nothing lost, nothing twice.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run ();

my $node = mzcoord_node('sinkcrash', create_extension => 1);
$node->safe_psql('postgres', q{
	CREATE TABLE w (k int, v int);
	INSERT INTO w SELECT g, 0 FROM generate_series(1, 20) g;
	SELECT mzcoord.create_table('w', '1 hour');
	INSERT INTO w SELECT g, 1 FROM generate_series(1, 5) g;
	SELECT mzcoord.create_sink('snk', 'w');
	SELECT mzcoord.create_sink('snk_nosnap', 'w', false);
});

# Write load: autocommit inserts, updates (a retraction and an insertion)
# and deletes, some several to a transaction, until killed.
my $script = $node->basedir . '/load.sql';
{
	open my $fh, '>', $script or die $!;
	for my $i (1 .. 30000)
	{
		my $k = 1 + $i % 40;
		print $fh "INSERT INTO w VALUES ($k, $i);\n";
		print $fh "UPDATE w SET v = v + 1 WHERE k = $k;\n";
		print $fh "BEGIN; INSERT INTO w VALUES ($k, -1); INSERT INTO w VALUES ($k, -1); DELETE FROM w WHERE k = $k AND v = -1; INSERT INTO w VALUES ($k, -1); COMMIT;\n"
		  if $i % 3 == 0;
		print $fh "DELETE FROM w WHERE k = $k AND v < $i - 200;\n" if $i % 7 == 0;
		print $fh "SELECT pg_sleep(0.003);\n" if $i % 5 == 0;
	}
	close $fh;
}

sub start_load
{
	my ($out, $err) = ('', '');
	return IPC::Run::start(
		[ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-f', $script ],
		'>', \$out, '2>', \$err);
}

sub stop_load
{
	my ($h) = @_;
	eval { $h->kill_kill; };
}

sub wait_ready
{
	my ($what) = @_;
	$node->poll_query_until('postgres', 'SELECT ready FROM mzcoord.controller_status()')
	  or die "$what: controller not ready after the restart";
}

# The durable upper of a sink.
sub sink_upper
{
	my ($sink) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT c.upper FROM mzcoord.collections c JOIN mzcoord.items i ON i.id = c.item_id
		 WHERE i.relation = '$sink'::regclass});
}

# Rows of the sink not in the table's history between its as-of and its
# upper, rows of that history not in the sink, and the sink's rows.
sub compare_stream
{
	my ($sink, $snapshot) = @_;
	my $snap = $snapshot ? 'true' : 'false';
	return $node->safe_psql('postgres', qq{
		CREATE TEMP TABLE f AS
		SELECT c.as_of, c.upper FROM mzcoord.collections c JOIN mzcoord.items i ON i.id = c.item_id
		 WHERE i.relation = '$sink'::regclass;
		CREATE TEMP TABLE e AS
		SELECT k, v, (SELECT as_of FROM f) AS mz_timestamp, count(*) AS mz_diff
		  FROM mzcoord.read_at(NULL::w, (SELECT as_of FROM f))
		 WHERE $snap GROUP BY k, v
		UNION ALL
		SELECT (c."row").k, (c."row").v, c.mz_timestamp, c.mz_diff
		  FROM mzcoord.changes(NULL::w, (SELECT as_of FROM f), (SELECT upper - 1 FROM f)) c;
		SELECT (SELECT count(*) FROM (SELECT k, v, mz_timestamp, mz_diff FROM $sink
		                              EXCEPT ALL SELECT * FROM e) x)
		       || ' extra, ' ||
		       (SELECT count(*) FROM (SELECT * FROM e EXCEPT ALL
		                              SELECT k, v, mz_timestamp, mz_diff FROM $sink) y)
		       || ' missing, ' ||
		       (SELECT count(*) FROM (SELECT k, v, mz_timestamp FROM $sink
		                               GROUP BY 1, 2, 3 HAVING count(*) > 1) z)
		       || ' twice',
		       (SELECT count(*) FROM $sink)});
}

my %uppers = (snk => sink_upper('snk'), snk_nosnap => sink_upper('snk_nosnap'));
for my $point ('export_before_upper', 'export_before_commit', 'immediate')
{
	my $load = start_load();
	sleep 2;
	my $logpos = -s $node->logfile;
	if ($point eq 'immediate')
	{
		# Exports run after every tick (50 ms): an immediate stop at an
		# arbitrary moment under load lands in the middle of many of them.
		sleep 1;
		$node->stop('immediate');
		stop_load($load);
		$node->start;
		wait_ready($point);
	}
	else
	{
		# The setting is written in one session, then reloaded by pg_ctl: the
		# crash may come before a session that reloaded it could end.
		$node->safe_psql('postgres', "ALTER SYSTEM SET mzcoord.failpoint = '$point'");
		$node->reload;
		ok($node->wait_for_log(qr/failpoint "$point" reached/, $logpos),
			"$point: the server crashed at the failpoint");
		stop_load($load);
		# The point is reached again after every crash restart.
		$node->stop('immediate');
		$node->adjust_conf('postgresql.auto.conf', 'mzcoord.failpoint', undef);
		$node->start;
		wait_ready($point);
	}
	for my $sink ('snk', 'snk_nosnap')
	{
		my $u = sink_upper($sink);
		cmp_ok($u, '>=', $uppers{$sink}, "$point: the upper of $sink did not go back");
		$uppers{$sink} = $u;
	}
}

# Once the load stopped, the sinks catch up with the table.
my $table_upper = $node->safe_psql('postgres',
	q{SELECT upper FROM mzcoord.frontiers WHERE relation = 'w'::regclass});
for my $sink ('snk', 'snk_nosnap')
{
	ok($node->poll_query_until('postgres', qq{
		SELECT c.upper >= $table_upper FROM mzcoord.collections c
		  JOIN mzcoord.items i ON i.id = c.item_id WHERE i.relation = '$sink'::regclass}),
		"$sink caught up with the table after the crashes");
}

my ($diff, $rows) = split /\|/, compare_stream('snk', 1);
is($diff, '0 extra, 0 missing, 0 twice',
	"snk holds the table's history from its as-of exactly once ($rows rows)");
cmp_ok($rows, '>', 1000, 'snk exported the load');
($diff, $rows) = split /\|/, compare_stream('snk_nosnap', 0);
is($diff, '0 extra, 0 missing, 0 twice',
	"snk_nosnap holds the table's updates after its as-of exactly once ($rows rows)");
ok($node->safe_psql('postgres', q{
	SELECT count(*) FROM snk WHERE mz_diff > 0 AND mz_timestamp = (
		SELECT c.as_of FROM mzcoord.collections c JOIN mzcoord.items i ON i.id = c.item_id
		 WHERE i.relation = 'snk'::regclass)}) >= 20,
	'snk starts with a snapshot of the rows the table had at its as-of');
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency() is clean');

$node->stop;
done_testing();
