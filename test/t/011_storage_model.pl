# Randomized model test of the data plane.
#
# Several clients (background psql sessions) write two registered tables
# (INSERT, UPDATE, DELETE, TRUNCATE; READ COMMITTED and REPEATABLE READ;
# committed and rolled back), append to a source and advance its upper,
# compact, and read at random valid times, some of them holding the time
# over several steps and reading it again; the coordinator compacts all the
# while (retain history of one second).  Every committed write is recorded
# in a model, as (write timestamp, updates); every read is compared with
# the contents the model gives at that time.
#
# The model takes each commit's timestamp from the system
# (mzcoord.last_commit_ts()), so it checks the histories against the
# system's own times; 012_linearizable.pl checks them against real time.
#
# One Perl loop drives the sessions, one statement at a time, so the model
# learns of a commit before any later read; reads pick times below the
# upper, and statements that would wait for another session's lock give up
# after lock_timeout (the transaction is then rolled back and forgotten).
#
# MZCOORD_MODEL_SEED (default: from the clock) seeds the choices and is
# printed; MZCOORD_MODEL_SECONDS (default 60) bounds the run.  The sequence
# of choices is reproducible from the seed; lock timeouts and the exact
# timestamps depend on timing.  A mismatch prints the seed, the relation,
# the time read and the first time at which the history differs from the
# model.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

my $seed = $ENV{MZCOORD_MODEL_SEED} // (time() % 1000000);
my $seconds = $ENV{MZCOORD_MODEL_SECONDS} // 60;
my $nclients = 4;
diag("model test: seed $seed, $seconds seconds, $nclients clients "
	  . "(rerun with MZCOORD_MODEL_SEED=$seed)");
srand($seed);

my $node = mzcoord_node('storagemodel', create_extension => 1);
$node->safe_psql('postgres', q{
	CREATE TABLE ma (k int, v int);
	CREATE TABLE mb (k int, v text, j jsonb);
	SELECT mzcoord.create_table('ma', '1 second');
	SELECT mzcoord.create_table('mb', '1 second');
	SELECT mzcoord.create_source('ms', 'k int, v text', '1 second');
});

# ---------------------------------------------------------------------------
# The model: per relation, the committed updates [ts, row, diff].
# ---------------------------------------------------------------------------
my %model = (ma => [], mb => [], ms => []);

sub model_at
{
	my ($rel, $t) = @_;
	my %c;
	foreach my $u (@{ $model{$rel} })
	{
		$c{ $u->[1] } += $u->[2] if $u->[0] <= $t;
	}
	my @rows;
	foreach my $r (sort keys %c)
	{
		if ($c{$r} < 0)
		{
			fail_model("the model has a negative count for $rel row $r at $t");
			next;
		}
		push @rows, ($r) x $c{$r};
	}
	return join("\n", @rows);
}

# A history is valid when no row's count is ever negative: in timestamp
# order, every retraction finds the row.  Returns the first bad time.
sub model_invalid_at
{
	my ($rel) = @_;
	my %c;
	my @u = sort { $a->[0] <=> $b->[0] } @{ $model{$rel} };
	for (my $i = 0; $i < @u; $i++)
	{
		$c{ $u[$i][1] } += $u[$i][2];
		next if $i + 1 < @u && $u[ $i + 1 ][0] == $u[$i][0];
		foreach my $r (keys %c)
		{
			return "$u[$i][0] (row $r)" if $c{$r} < 0;
		}
	}
	return undef;
}

# Rows as the sessions print them: fields joined by '|', null as <null>.
my %cols = (
	ma => 'k, v',
	mb => 'k, v, j',
	ms => 'k, v');

sub sorted { return join("\n", sort grep { $_ ne '' } split /\n/, $_[0] // ''); }

# ---------------------------------------------------------------------------
# Sessions
# ---------------------------------------------------------------------------
# A session of its own for looking at frontiers and the history.
my $meta = $node->background_psql('postgres');
$meta->query_safe(q{\pset null <null>});

my @clients;
for my $i (0 .. $nclients - 1)
{
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	$s->query_safe(q{\pset null <null>});
	$s->query_safe(q{\set VERBOSITY sqlstate});
	$s->query_safe(q{SET lock_timeout = '100ms'});
	push @clients, {
		id => $i, s => $s, state => 'idle',
		# source: own rows with their counts, last append time
		own => {}, last_at => 0 };
}

# Run one statement; returns (ok, output, sqlstate).
sub run
{
	my ($c, $sql) = @_;
	my $s = $c->{s};
	$s->{stderr} = '';
	my ($out, $err) = $s->query($sql);
	my $state = '';
	if ($err)
	{
		($state) = $s->{stderr} =~ /ERROR:\s+([0-9A-Z]{5})/;
		$state //= 'unknown: ' . $s->{stderr};
		$s->{stderr} = '';
	}
	return (!$err, $out, $state);
}

my %stats;
my $failed = 0;

sub fail_model
{
	my ($what) = @_;
	$failed = 1;
	fail($what);
	diag("seed $seed: $what");
}

sub rollback
{
	my ($c, $why) = @_;
	run($c, 'ROLLBACK');
	$stats{"rollback: $why"}++;
	$c->{state} = 'idle';
	delete $c->{pending};
}

sub frontiers
{
	my ($rel) = @_;
	my $r = $meta->query_safe(
		"SELECT since, upper FROM mzcoord.frontiers WHERE relation = '$rel'::regclass");
	return split /\|/, $r;
}

# The first time at or after since at which read_at differs from the model.
sub first_difference
{
	my ($rel) = @_;
	my ($since, $upper) = frontiers($rel);
	my %times = map { $_->[0] => 1 } @{ $model{$rel} };
	foreach my $t (sort { $a <=> $b } grep { $_ >= $since && $_ < $upper } keys %times)
	{
		my $got = sorted($meta->query_safe(
			"SELECT $cols{$rel} FROM mzcoord.read_at(NULL::$rel, $t)"));
		return $t if $got ne sorted(model_at($rel, $t));
	}
	return 'none found';
}

# ---------------------------------------------------------------------------
# Actions
# ---------------------------------------------------------------------------
sub rand_int { my ($n) = @_; return int(rand($n)); }
sub pick { return $_[ rand_int(scalar @_) ]; }

sub rows_of
{
	my ($out) = @_;
	return grep { $_ ne '' } split /\n/, $out // '';
}

sub start_write
{
	my ($c) = @_;
	my $iso = rand() < 0.7 ? 'READ COMMITTED' : 'REPEATABLE READ';
	run($c, "BEGIN ISOLATION LEVEL $iso");
	$c->{state} = 'writing';
	$c->{iso} = $iso;
	$c->{pending} = [];
	$c->{ops} = 1 + rand_int(4);
}

# One write statement of a write transaction; records its updates.
sub write_op
{
	my ($c) = @_;
	my $rel = pick('ma', 'mb');
	my $k = 1 + rand_int(12);
	my $kind = rand();
	my ($ok, $out, $state);
	my @ups;
	if ($kind < 0.4)
	{
		my @vals;
		for (1 .. 1 + rand_int(3))
		{
			my $kk = 1 + rand_int(12);
			push @vals, $rel eq 'ma'
			  ? sprintf('(%d, %s)', $kk, pick('NULL', rand_int(4)))
			  : sprintf('(%d, %s, %s)', $kk, pick("'x'", "'y'", 'NULL'),
				pick(q{'{"a": 1}'}, q{'[1, 2]'}, 'NULL'));
		}
		($ok, $out, $state) = run($c,
			"INSERT INTO $rel VALUES " . join(', ', @vals) . " RETURNING $cols{$rel}");
		push @ups, map { [ $rel, $_, 1 ] } rows_of($out) if $ok;
	}
	elsif ($kind < 0.7)
	{
		my $set = $rel eq 'ma'
		  ? 'v = coalesce(ma.v, 0) + 1'
		  : sprintf(q{v = %s, j = %s}, pick("'x'", "'z'", 'NULL'), pick(q{'{"b": 2}'}, 'NULL'));
		my $old = join(', ', map { "o.$_" } split /, /, $cols{$rel});
		my $new = join(', ', map { "$rel.$_" } split /, /, $cols{$rel});
		($ok, $out, $state) = run($c, qq{
			UPDATE $rel SET $set
			  FROM (SELECT ctid AS c, * FROM $rel WHERE k = $k FOR UPDATE) o
			 WHERE $rel.ctid = o.c
			RETURNING $old, '=>', $new});
		if ($ok)
		{
			foreach my $line (rows_of($out))
			{
				my ($o, $n) = split /\|=>\|/, $line;
				push @ups, [ $rel, $o, -1 ], [ $rel, $n, 1 ];
			}
		}
	}
	elsif ($kind < 0.95)
	{
		($ok, $out, $state) = run($c, "DELETE FROM $rel WHERE k = $k RETURNING $cols{$rel}");
		push @ups, map { [ $rel, $_, -1 ] } rows_of($out) if $ok;
	}
	elsif ($c->{iso} eq 'READ COMMITTED')
	{
		# TRUNCATE removes every committed row: list them under its lock.
		($ok, $out, $state) = run($c, qq{
			LOCK TABLE $rel IN ACCESS EXCLUSIVE MODE;
			SELECT $cols{$rel} FROM $rel;
			TRUNCATE $rel});
		push @ups, map { [ $rel, $_, -1 ] } rows_of($out) if $ok;
		$stats{truncates}++ if $ok;
	}
	else
	{
		$ok = 1;
	}
	if (!$ok)
	{
		rollback($c, $state);
		return;
	}
	push @{ $c->{pending} }, @ups;
	$c->{ops}--;
}

sub finish_write
{
	my ($c) = @_;
	if (rand() < 0.25)
	{
		rollback($c, 'chosen');
		return;
	}
	my ($cok, $cout, $cstate) = run($c, 'COMMIT');
	if (!$cok)
	{
		$stats{"commit failed: $cstate"}++;
		$c->{state} = 'idle';
		return;
	}
	# The commit timestamp is fixed at commit.
	my ($ok, $w) = run($c, 'SELECT mzcoord.last_commit_ts()');
	$w =~ s/\s+//g if defined $w;
	if (@{ $c->{pending} })
	{
		die "no write timestamp for a transaction that wrote" if !$w;
		push @{ $model{ $_->[0] } }, [ $w, $_->[1], $_->[2] ] foreach @{ $c->{pending} };
		$stats{'commits with writes'}++;
	}
	$c->{state} = 'idle';
	delete $c->{pending};
}

# Read a relation at a random valid time; maybe keep holding it.
sub start_read
{
	my ($c) = @_;
	my $rel = pick('ma', 'mb', 'ms');
	my ($since, $upper) = frontiers($rel);
	return if !defined $upper || $upper eq '' || $since >= $upper;
	my $t = $since + rand_int($upper - $since);
	# Most reads at a time something was written at, or just before it:
	# where a wrong timestamp would show.
	my @times = grep { $_ >= $since && $_ < $upper } map { $_->[0] } @{ $model{$rel} };
	if (@times && rand() < 0.7)
	{
		$t = pick(@times) - (rand() < 0.3 ? 1 : 0);
		$t = $since if $t < $since;
	}
	run($c, 'BEGIN');
	$c->{state} = 'holding';
	$c->{rel} = $rel;
	$c->{t} = $t;
	$c->{rereads} = rand_int(3);
	read_check($c, 1);
}

sub read_check
{
	my ($c, $first) = @_;
	my ($rel, $t) = ($c->{rel}, $c->{t});
	my ($ok, $out, $state) = run($c, "SELECT $cols{$rel} FROM mzcoord.read_at(NULL::$rel, $t)");
	if (!$ok)
	{
		# The since may pass t between choosing it and reading; never
		# while the transaction holds it.  A TRUNCATE in progress locks
		# readers out.
		if (($first && $state eq '55000') || $state eq '55P03')
		{
			rollback($c, "read $state");
			return;
		}
		fail_model("read of $rel at $t failed with $state");
		rollback($c, $state);
		return;
	}
	$stats{reads}++;
	$stats{rereads}++ if !$first;
	my $expected = sorted(model_at($rel, $t));
	if (sorted($out) ne $expected)
	{
		fail_model("read of $rel at $t differs from the model; first differing time: "
			  . first_difference($rel)
			  . "\n got:\n" . sorted($out) . "\n expected:\n" . $expected);
		rollback($c, 'mismatch');
	}
}

# Append to the source at a time at or after its upper (and after this
# client's last append), retracting only rows this client inserted.
sub start_append
{
	my ($c) = @_;
	my ($since, $upper) = frontiers('ms');
	my $at = ($upper > $c->{last_at} ? $upper : $c->{last_at}) + rand_int(30);
	my (@ins, @ret);
	for (1 .. 1 + rand_int(3))
	{
		my $row = sprintf('%d|%s', 100 * ($c->{id} + 1) + rand_int(5), pick('p', 'q'));
		push @ins, $row;
	}
	foreach my $row (keys %{ $c->{own} })
	{
		push @ret, $row if $c->{own}{$row} > 0 && rand() < 0.3;
	}
	my $arr = sub {
		return 'ARRAY[' . join(', ', map { my ($k, $v) = split /\|/; "ROW($k, '$v')" } @_)
		  . ']::ms[]';
	};
	run($c, 'BEGIN');
	my ($ok, $out, $state) = run($c,
		"SELECT mzcoord.append(NULL::ms, $at, " . $arr->(@ins) . ', ' . $arr->(@ret) . ')');
	if (!$ok)
	{
		rollback($c, "append $state");
		return;
	}
	$c->{state} = 'appending';
	$c->{pending} = [ (map { [ 'ms', $_, 1 ] } @ins), (map { [ 'ms', $_, -1 ] } @ret) ];
	$c->{at} = $at;
}

sub finish_append
{
	my ($c) = @_;
	if (rand() < 0.2)
	{
		rollback($c, 'chosen');
		return;
	}
	if (rand() < 0.5)
	{
		my ($ok, $out, $state) = run($c,
			"SELECT mzcoord.advance_upper('ms', $c->{at} + 1 + " . rand_int(400) . ')');
		if (!$ok)
		{
			rollback($c, "advance $state");
			return;
		}
	}
	my ($ok, $out, $state) = run($c, 'COMMIT');
	if ($ok)
	{
		foreach my $u (@{ $c->{pending} })
		{
			push @{ $model{ms} }, [ $c->{at}, $u->[1], $u->[2] ];
			$c->{own}{ $u->[1] } += $u->[2];
		}
		$c->{last_at} = $c->{at};
		$stats{appends}++;
	}
	$c->{state} = 'idle';
	delete $c->{pending};
}

sub advance
{
	my ($c) = @_;
	my ($since, $upper) = frontiers('ms');
	my ($ok, $out, $state) = run($c,
		"SELECT mzcoord.advance_upper('ms', $upper + " . (1 + rand_int(400)) . ')');
	$stats{$ok ? 'advances' : "advance failed: $state"}++;
}

sub compact
{
	my ($c) = @_;
	my $rel = pick('ma', 'mb', 'ms');
	my ($ok, $out, $state) = run($c, "SELECT rows_in FROM mzcoord.compact('$rel')");
	$stats{$ok ? 'compactions by clients' : "compact failed: $state"}++;
}

# ---------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------
my $deadline = time() + $seconds;
my $steps = 0;
my $loop_start = Time::HiRes::time();
while (time() < $deadline && !$failed)
{
	my $c = $clients[ rand_int($nclients) ];
	my $st0 = Time::HiRes::time();
	my $what = $c->{state};
	$steps++;
	if ($c->{state} eq 'idle')
	{
		my $r = rand();
		if    ($r < 0.40) { start_write($c); }
		elsif ($r < 0.65) { start_read($c); }
		elsif ($r < 0.85) { start_append($c); }
		elsif ($r < 0.95) { advance($c); }
		else              { compact($c); }
	}
	elsif ($c->{state} eq 'writing')
	{
		if ($c->{ops} > 0) { write_op($c); }
		else               { finish_write($c); }
	}
	elsif ($c->{state} eq 'holding')
	{
		if ($c->{rereads}-- > 0) { read_check($c, 0); }
		else { run($c, 'COMMIT'); $c->{state} = 'idle'; }
	}
	elsif ($c->{state} eq 'appending')
	{
		finish_append($c);
	}
	$stats{"ms in $what"} += int(1000 * (Time::HiRes::time() - $st0));
	if ($steps % 500 == 0)
	{
		foreach my $rel (sort keys %model)
		{
			my $bad = model_invalid_at($rel);
			fail_model("the committed writes of $rel retract a row before it exists, at $bad")
			  if defined $bad;
		}
	}
}

# End every open transaction, then compare the latest contents and the
# relations themselves with the model.
foreach my $c (@clients)
{
	if    ($c->{state} eq 'writing')   { finish_write($c); }
	elsif ($c->{state} eq 'appending') { finish_append($c); }
	elsif ($c->{state} ne 'idle')      { run($c, 'COMMIT'); $c->{state} = 'idle'; }
}
diag(sprintf("loop %.1f s", Time::HiRes::time() - $loop_start));
diag("model test: $steps steps; "
	  . join(', ', map { "$_: $stats{$_}" } sort keys %stats));
diag('compactions recorded: '
	  . $node->safe_psql('postgres', 'SELECT sum(compactions) FROM mzcoord.storage'));

foreach my $rel (sort keys %model)
{
	my $bad = model_invalid_at($rel);
	fail_model("the committed writes of $rel retract a row before it exists, at $bad")
	  if defined $bad;
}
if (!$failed)
{
	foreach my $rel ('ma', 'mb')
	{
		my ($since, $upper) = frontiers($rel);
		my $t = $upper - 1;
		my $got = sorted($node->safe_psql('postgres', qq{
			\\pset null <null>
			SELECT $cols{$rel} FROM mzcoord.read_at(NULL::$rel, $t)}));
		is($got, sorted(model_at($rel, $t)), "$rel at its latest time matches the model");
		is(sorted($node->safe_psql('postgres', qq{
			\\pset null <null>
			SELECT $cols{$rel} FROM $rel})), $got, "$rel itself matches its latest time");
	}
	my ($since, $upper) = frontiers('ms');
	is(sorted($node->safe_psql('postgres', qq{
		\\pset null <null>
		SELECT k, v FROM ms})), sorted(model_at('ms', $upper - 1)),
		'the source relation matches the model at its latest complete time');
	cmp_ok($stats{reads} // 0, '>', 50, 'many reads were checked');
	cmp_ok($stats{'commits with writes'} // 0, '>', 20, 'many writes were committed');
	cmp_ok($node->safe_psql('postgres', 'SELECT sum(compactions) FROM mzcoord.storage'),
		'>', 0, 'compaction ran');
}
my $problems = $node->safe_psql('postgres', 'SELECT * FROM mzcoord.check_consistency()');
is($problems, '', 'consistent after the run');

$_->{s}->quit foreach @clients;
$meta->quit;
$node->stop;
done_testing();
