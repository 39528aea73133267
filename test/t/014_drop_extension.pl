# DROP EXTENSION mzcoord under load (issue 14, defect 6).
#
# Real concurrent sessions (long-lived psql processes) write the registered
# tables, read them with select_timestamp/read_at, append to a source and
# read the catalog, while the coordinator ticks (50 ms) and the main session
# drops the extension.  DDL sessions fire mzcoord's event triggers at the
# same time: one alters registered table d1 (which a materialized view joins
# with t1, so the event trigger analyses a definition that reads t1) in
# transactions that hold d1 for a while, one creates, registers and drops
# tables.  Repeated a few rounds; every round then checks what is left and
# creates everything again under the same names:
#
#   - no session ever gets 40P01 (deadlock) or XX000; a session racing the
#     drop may fail with a clear error (55000 "being dropped", or, once it
#     is gone, an undefined function, relation or schema);
#   - DROP EXTENSION without CASCADE refuses with 2BP01 while relations
#     mzcoord created (source, materialized view, index, sink) exist, and
#     names them; with CASCADE, or once they were dropped, it succeeds
#     without retrying;
#   - registered tables stay with their rows, without capture triggers;
#     writes to them just work; the extension's relations are gone;
#   - CREATE EXTENSION and re-creating the same names work, and
#     check_consistency() returns no rows.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run ();
use Time::HiRes ();

my $rounds = $ENV{MZCOORD_DROP_ROUNDS} // 4;
my $node = mzcoord_node('drop_extension', create_extension => 1,
	conf => "max_connections = 40\ndeadlock_timeout = 100ms\n");

my @tables = qw(t1 t2 t3);
# d1 comes after t1 in OID order: the drop locks t1 before d1.
foreach my $t (@tables, 'd1')
{
	$node->safe_psql('postgres', qq{
		CREATE TABLE $t (k int NOT NULL, v text NOT NULL);
		INSERT INTO $t SELECT g, 'init' FROM generate_series(1, 10) g;
	});
}

# Registers the tables and creates a source, materialized views, an index
# and a sink with fixed names.
sub create_items
{
	$node->safe_psql('postgres', q{
		SELECT mzcoord.create_table('t1');
		SELECT mzcoord.create_table('t2');
		SELECT mzcoord.create_table('t3');
		SELECT mzcoord.create_table('d1');
		SELECT mzcoord.create_source('s1', 'k int, v text');
		SELECT mzcoord.create_materialized_view('mv1',
			'SELECT k, count(*) AS n FROM public.t1 GROUP BY k');
		SELECT mzcoord.create_materialized_view('mv2',
			'SELECT a.k, count(*) AS n FROM public.t1 a JOIN public.d1 b ON b.k = a.k GROUP BY a.k');
		SELECT mzcoord.create_index('t2_k', 't2', ARRAY['k']);
		SELECT mzcoord.create_sink('t3_sink', 't3');
	});
	return;
}

sub wait_ready
{
	$node->poll_query_until('postgres',
		'SELECT ready FROM mzcoord.controller_status()')
	  or die 'mzcoord controller not ready';
	return;
}

# The script of one load session: $n iterations of its kind of work.
# Errors do not stop psql; VERBOSITY verbose prints each error's SQLSTATE.
sub load_script
{
	my ($kind, $i, $n, $round) = @_;
	my $s = "\\set VERBOSITY verbose\nSET client_min_messages = error;\n";
	my $t = $tables[ $i % @tables ];
	for my $j (1 .. $n)
	{
		my $k = 1000 + $j;
		if ($kind eq 'writer')
		{
			$s .= "INSERT INTO $t VALUES ($k, 'w$i');\n";
			$s .= "BEGIN; UPDATE $t SET v = 'u$i' WHERE k = $k; "
			  . "DELETE FROM $t WHERE k = $k - 1 AND v = 'u$i'; COMMIT;\n";
		}
		elsif ($kind eq 'alter')
		{
			# The event triggers of the second ALTER run while the
			# transaction has held d1 for a while: a drop that took t1 and
			# waits for d1 must not wait for them (they analyse mv2, which
			# reads t1).
			$s .= "BEGIN; ALTER TABLE d1 ALTER COLUMN v SET DEFAULT 'a$j'; "
			  . "SELECT pg_sleep(0.05); "
			  . "ALTER TABLE d1 ALTER COLUMN v DROP DEFAULT; COMMIT;\n";
		}
		elsif ($kind eq 'ddl')
		{
			my $d = "dd_${round}_$j";
			$s .= "CREATE TABLE $d (k int NOT NULL, v text NOT NULL);\n";
			$s .= "SELECT mzcoord.create_table('$d');\n";
			$s .= "INSERT INTO $d VALUES ($k, 'd');\n";
			$s .= "ALTER TABLE $d ADD COLUMN w int;\n";
			$s .= "DROP TABLE $d;\n";
		}
		elsif ($kind eq 'reader')
		{
			$s .= "BEGIN; SELECT count(*) FROM mzcoord.read_at(NULL::$t, "
			  . "mzcoord.select_timestamp(ARRAY['$t'::regclass])); "
			  . "SELECT count(*) FROM mzcoord.read_at(NULL::t1, "
			  . "mzcoord.select_timestamp(ARRAY['t1'::regclass])); COMMIT;\n";
			$s .= "SELECT count(*) FROM mzcoord.items;\n";
		}
		else
		{
			# Compactions of a registered table and plain reads of
			# relations mzcoord created.
			$s .= "SELECT count(*) FROM mzcoord.compact('t1');\n" if $j % 10 == 0;
			$s .= "SELECT count(*) FROM mv1; SELECT count(*) FROM t3_sink;\n";
		}
	}
	return $s;
}

my $logdir = "$PostgreSQL::Test::Utils::log_path/drop_$$";
mkdir $logdir or die "mkdir $logdir: $!";

# Starts the load sessions, each a psql reading its script from a file and
# writing its errors to another.
sub start_load
{
	my ($round) = @_;
	my @sessions;
	my @kinds = (('writer') x 3, ('reader') x 3, 'source', 'alter', 'ddl');
	for my $i (0 .. $#kinds)
	{
		my $base = "$logdir/r${round}_$kinds[$i]_$i";
		my $ss = { kind => $kinds[$i], err => "$base.err" };
		open(my $fh, '>', "$base.sql") or die "$base.sql: $!";
		print $fh load_script($kinds[$i], $i, 4000, $round);
		close($fh);
		$ss->{h} = IPC::Run::start(
			[ $node->installed_command('psql'), '-XAtq', '-v', 'ON_ERROR_STOP=0',
				'-d', $node->connstr('postgres'), '-f', "$base.sql" ],
			'<', \undef, '>', "$base.out", '2>', $ss->{err});
		push @sessions, $ss;
	}
	return @sessions;
}

# Stops the sessions; returns "kind SQLSTATE" => count over their errors,
# and the error lines with a forbidden SQLSTATE.
sub stop_load
{
	my @sessions = @_;
	my (%codes, @bad);
	foreach my $ss (@sessions)
	{
		$ss->{h}->kill_kill;
		foreach my $line (split /\n/, slurp_file($ss->{err}))
		{
			next unless $line =~ /(?:ERROR|FATAL|PANIC):\s+([0-9A-Z]{5}):/;
			$codes{"$ss->{kind} $1"}++;
			push @bad, "$ss->{kind}: $line" if $1 eq '40P01' || $1 eq 'XX000';
		}
	}
	return (\%codes, \@bad);
}

create_items();
my %all_codes;
for my $round (1 .. $rounds)
{
	my @sessions = start_load($round);
	Time::HiRes::sleep(1.5);

	# Rounds: 1 and 4 and later go straight to CASCADE; 2 drops the
	# created items first, then plain DROP EXTENSION; 3 first tries
	# without CASCADE (refused), then CASCADE.
	if ($round == 3)
	{
		my ($ret, $out, $err) = $node->psql('postgres',
			"\\set VERBOSITY verbose\nDROP EXTENSION mzcoord", timeout => 120);
		isnt($ret, 0, "round $round: DROP EXTENSION without CASCADE refused");
		like($err, qr/ERROR:\s+2BP01: cannot drop extension mzcoord because other objects depend on it/,
			"round $round: refused with 2BP01");
		like($err, qr/table s1 depends on extension mzcoord/,
			"round $round: names the source");
		like($err, qr/index t2_k depends on extension mzcoord/,
			"round $round: names the index");
		like($err, qr/table mv1 depends on extension mzcoord/,
			"round $round: names the materialized view");
		like($err, qr/table t3_sink depends on extension mzcoord/,
			"round $round: names the sink");
		unlike($err, qr/40P01|XX000/, "round $round: no deadlock in the refusal");
	}
	my $drop = 'DROP EXTENSION mzcoord CASCADE';
	if ($round == 2)
	{
		my ($ret, $out, $err) = $node->psql('postgres', q{
			\set VERBOSITY verbose
			SELECT mzcoord.drop('mv2');
			SELECT mzcoord.drop('t3_sink');
			SELECT mzcoord.drop('t2_k');
			SELECT mzcoord.drop('mv1');
			SELECT mzcoord.drop('s1');
		});
		is($ret, 0, "round $round: items dropped with mzcoord.drop") or diag($err);
		$drop = 'DROP EXTENSION mzcoord';
	}
	my $timed_out = 0;
	my ($ret, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\n$drop",
		timeout => 120, timed_out => \$timed_out);
	ok(!$timed_out, "round $round: $drop did not hang");
	is($ret, 0, "round $round: $drop under load") or diag($err);
	Time::HiRes::sleep(0.7);
	my ($codes, $bad) = stop_load(@sessions);
	is(scalar(@$bad), 0, "round $round: no 40P01 or XX000 in the sessions")
	  or diag(join("\n", @$bad[0 .. ($#$bad < 20 ? $#$bad : 20)]));
	note("round $round errors: "
		  . join(', ', map { "$_ x$codes->{$_}" } sort keys %$codes));
	$all_codes{$_} += $codes->{$_} foreach keys %$codes;

	# What is left.
	is($node->safe_psql('postgres', q{
		SELECT count(*) FROM pg_extension WHERE extname = 'mzcoord'}),
		'0', "round $round: the extension is gone");
	# The schema was created for the extension but is not a member (as
	# for any extension whose control file names a schema): it stays, empty.
	is($node->safe_psql('postgres', q{
		SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE n.nspname = 'mzcoord'}),
		'0', "round $round: nothing is left in schema mzcoord");
	is($node->safe_psql('postgres', q{
		SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class
		 WHERE relname IN ('s1', 'mv1', 'mv2', 't2_k', 't3_sink')
		    OR relname LIKE 'history_u%'}),
		'', "round $round: the extension's relations are gone");
	is($node->safe_psql('postgres', q{
		SELECT count(*) FROM pg_trigger
		 WHERE tgrelid IN ('t1'::regclass, 't2'::regclass, 't3'::regclass,
		                   'd1'::regclass)}),
		'0', "round $round: registered tables lost their capture triggers");
	foreach my $t (@tables, 'd1')
	{
		is($node->safe_psql('postgres',
				"SELECT count(*) FROM $t WHERE v = 'init'"),
			'10', "round $round: $t keeps its rows");
		my ($wret, $wout, $werr) = $node->psql('postgres', qq{
			INSERT INTO $t VALUES (-1, 'after');
			UPDATE $t SET v = 'after2' WHERE k = -1;
			DELETE FROM $t WHERE k = -1;
			TRUNCATE $t;
			INSERT INTO $t SELECT g, 'init' FROM generate_series(1, 10) g;
		});
		is($wret, 0, "round $round: $t is writable after the drop") or diag($werr);
	}

	# Everything again, with the same names.
	$node->safe_psql('postgres', 'CREATE EXTENSION mzcoord');
	wait_ready();
	create_items();
	is($node->safe_psql('postgres',
			'SELECT count(*) FROM mzcoord.check_consistency()'),
		'0', "round $round: recreated, check_consistency() is empty");
	$node->safe_psql('postgres', q{
		INSERT INTO t1 VALUES (-2, 'x');
		DELETE FROM t1 WHERE k = -2;
	});
}
diag('errors of the load sessions over all rounds: '
	  . join(', ', map { "$_ x$all_codes{$_}" } sort keys %all_codes));

# A transaction that ran the drop cannot be prepared (its locks would
# outlive the end of this session's transaction, where the drop stops
# being announced); the refusal leaves nothing announced behind.
my ($pret, $pout, $perr) = $node->psql('postgres', q{
	\set VERBOSITY verbose
	BEGIN;
	DROP EXTENSION mzcoord CASCADE;
	PREPARE TRANSACTION 'drop_mzcoord';
});
like($perr,
	qr/ERROR:\s+0A000: cannot PREPARE a transaction that ran DROP EXTENSION mzcoord/,
	'PREPARE TRANSACTION of a drop is refused');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_extension WHERE extname = 'mzcoord'}),
	'1', 'the refused drop left the extension in place');

is($node->safe_psql('postgres',
		'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency() is empty at the end');
my $log = slurp_file($node->logfile);
unlike($log, qr/TRAP|PANIC|terminated by signal/, 'no crash in the server log');

$node->stop;
done_testing();
