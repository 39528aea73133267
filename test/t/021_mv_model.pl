# Randomized model test of continual materialized views (issue 12): two
# psql sessions write two tables at the same time with random inserts,
# updates, deletes and multi-statement transactions, each printing the
# commit time of every transaction it committed.  The test replays what it
# wrote, in commit-time order, in a model of its own (Perl, not the
# system's answer), and compares every view read as of every commit time
# (and the time before it) with the model's view contents at that time.
#
# The sessions write disjoint keys of table a, and only session 2 writes
# table b, so transactions of both sessions that share a commit time (a
# group commit) commute; within a session, transactions apply in their
# order.  MZCOORD_MODEL_SEED chooses the random seed.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run ();

my $seed = $ENV{MZCOORD_MODEL_SEED} // 12;
my $nops = $ENV{MZCOORD_MODEL_OPS} // 500;
note "seed $seed, $nops transactions per session";
srand($seed);

my $node = mzcoord_node('mvmodel', create_extension => 1);
$node->safe_psql('postgres', q{
	CREATE TABLE a (k int, v int);
	CREATE TABLE b (g int, w int);
	SELECT mzcoord.create_table('a', '1 hour');
	SELECT mzcoord.create_table('b', '1 hour');
});

# The views and what each shows, computed from a model state.
my %views = (
	m_filter => 'SELECT k, v FROM a WHERE v % 2 = 0',
	m_join => 'SELECT a.k % 5 AS g, count(*) AS n, sum(a.v * b.w) AS s FROM a JOIN b ON b.g = a.k % 5 GROUP BY 1',
	m_total => 'SELECT count(*) AS n, sum(v) AS s FROM a',
	m_mv => 'SELECT sum(n) AS n FROM m_join',
);
for my $mv ('m_filter', 'm_join', 'm_total', 'm_mv')
{
	$node->safe_psql('postgres',
		"SELECT mzcoord.create_materialized_view('$mv', \$q\$$views{$mv}\$q\$, '1 hour')");
}

# Model state: a: k -> [v...], b: g -> [w...].
sub model_views
{
	my ($a, $b) = @_;
	my %out;
	my @f;
	for my $k (keys %$a)
	{
		for my $v (@{ $a->{$k} })
		{
			push @f, "($k,$v)" if $v % 2 == 0;
		}
	}
	$out{m_filter} = join ' ', sort @f;
	my (%n, %s);
	my ($cnt, $sum) = (0, undef);
	for my $k (keys %$a)
	{
		for my $v (@{ $a->{$k} })
		{
			$cnt++;
			$sum = ($sum // 0) + $v;
			my $g = $k % 5;
			for my $w (@{ $b->{$g} // [] })
			{
				$n{$g}++;
				$s{$g} += $v * $w;
			}
		}
	}
	$out{m_join} = join ' ', sort map { "($_,$n{$_},$s{$_})" } keys %n;
	$out{m_total} = "($cnt," . ($sum // '') . ")";
	my $nn;
	$nn += $n{$_} for keys %n;
	$out{m_mv} = '(' . ($nn // '') . ')';
	return \%out;
}

# Each transaction: SQL text and a closure applying it to the model.
sub apply_update
{
	my ($a, $k, $d) = @_;
	$a->{$k} = [ map { $_ + $d } @{ $a->{$k} } ] if $a->{$k};
}

sub gen_txn
{
	my ($session) = @_;
	my $base = $session == 1 ? 0 : 30;
	my $key = sub { $base + 1 + int(rand(30)) };
	my $r = rand();
	if ($session == 2 && $r >= 0.85)
	{
		my $g = int(rand(5));
		my $w = 1 + int(rand(9));
		my $r2 = rand();
		if ($r2 < 0.4)
		{
			return ("UPDATE b SET w = $w WHERE g = $g;",
				sub { my ($a, $b) = @_; $b->{$g} = [ map { $w } @{ $b->{$g} // [] } ]; });
		}
		elsif ($r2 < 0.75)
		{
			return ("INSERT INTO b VALUES ($g, $w);",
				sub { my ($a, $b) = @_; push @{ $b->{$g} }, $w; });
		}
		return ("DELETE FROM b WHERE g = $g;",
			sub { my ($a, $b) = @_; delete $b->{$g}; });
	}
	my $k = $key->();
	if ($r < 0.4)
	{
		my $d = 1 + int(rand(5));
		return ("UPDATE a SET v = v + $d WHERE k = $k;",
			sub { my ($a, $b) = @_; apply_update($a, $k, $d); });
	}
	elsif ($r < 0.6)
	{
		my $v = int(rand(50));
		return ("INSERT INTO a VALUES ($k, $v);",
			sub { my ($a, $b) = @_; push @{ $a->{$k} }, $v; });
	}
	elsif ($r < 0.72)
	{
		return ("DELETE FROM a WHERE k = $k;",
			sub { my ($a, $b) = @_; delete $a->{$k}; });
	}
	# Several statements in one transaction.
	my $k2 = $key->();
	my $v = int(rand(50));
	my $d = 1 + int(rand(5));
	return ("BEGIN; INSERT INTO a VALUES ($k, $v); UPDATE a SET v = v + $d WHERE k = $k2; "
		  . "DELETE FROM a WHERE k = $k2 AND v > 60; COMMIT;",
		sub {
			my ($a, $b) = @_;
			push @{ $a->{$k} }, $v;
			apply_update($a, $k2, $d);
			if ($a->{$k2})
			{
				$a->{$k2} = [ grep { $_ <= 60 } @{ $a->{$k2} } ];
				delete $a->{$k2} unless @{ $a->{$k2} };
			}
		});
}

# Initial contents, written by the test itself (session 0).
my @ops;	# [ts, session, seq, closure]
my %txn;	# "session|seq" -> closure
{
	my @init;
	for my $k (1 .. 60)
	{
		my $v = int(rand(50));
		push @init, "($k, $v)";
		my $kk = $k;
		my $vv = $v;
		push @ops, [ 0, 0, $k, sub { my ($a, $b) = @_; push @{ $a->{$kk} }, $vv; } ];
	}
	my $ts_a = $node->safe_psql('postgres',
		'INSERT INTO a VALUES ' . join(', ', @init) . '; SELECT mzcoord.last_commit_ts()');
	$_->[0] = $ts_a for @ops;
	my $ts_b = $node->safe_psql('postgres',
		'INSERT INTO b SELECT g, g + 1 FROM generate_series(0, 4) g; SELECT mzcoord.last_commit_ts()');
	for my $g (0 .. 4)
	{
		my $gg = $g;
		push @ops, [ $ts_b, 0, 100 + $g, sub { my ($a, $b) = @_; push @{ $b->{$gg} }, $gg + 1; } ];
	}
}

# The two writers' scripts.
my @handles;
my %out;
for my $s (1, 2)
{
	my $file = $node->basedir . "/writer$s.sql";
	open my $fh, '>', $file or die $!;
	print $fh "\\set ON_ERROR_STOP 1\n";
	for my $seq (1 .. $nops)
	{
		my ($sql, $apply) = gen_txn($s);
		$txn{"$s|$seq"} = $apply;
		print $fh "$sql\n";
		print $fh "SELECT 'op|$s|$seq|' || coalesce(mzcoord.last_commit_ts()::text, '');\n";
		print $fh "SELECT pg_sleep(0.005);\n" if rand() < 0.3;
	}
	close $fh;
	$out{$s} = '';
	my $err = '';
	push @handles,
	  IPC::Run::start(
		[ 'psql', '-X', '-At', '-q', '-d', $node->connstr('postgres'), '-f', $file ],
		'>', \$out{$s}, '2>', \$err);
}
for my $h (@handles)
{
	$h->finish or die "a writer failed: " . ($h->result // '?');
}

# What they committed, and when.
my %seen_ts;
for my $s (1, 2)
{
	my $n = 0;
	for my $line (split /\n/, $out{$s})
	{
		next unless $line =~ /^op\|(\d+)\|(\d+)\|(\d*)$/;
		$n++;
		next if $3 eq '';	# nothing written yet (a no-op)
		push @ops, [ $3, $1, $2, $txn{"$1|$2"} ];
	}
	is($n, $nops, "writer $s committed every transaction");
}

@ops = sort { $a->[0] <=> $b->[0] || $a->[1] <=> $b->[1] || $a->[2] <=> $b->[2] } @ops;
my $last_ts = $ops[-1][0];

# Wait for the views to be complete past the last write.
$node->poll_query_until('postgres', qq{
	SELECT bool_and(upper > $last_ts) FROM mzcoord.frontiers
	 WHERE relation IN ('m_filter'::regclass, 'm_join'::regclass, 'm_total'::regclass,
	                    'm_mv'::regclass)})
  or die 'the views did not catch up';
my $as_of = $node->safe_psql('postgres', q{
	SELECT max(c.as_of) FROM mzcoord.collections c JOIN mzcoord.storage s USING (global_id)
	 WHERE s.relation IN ('m_filter'::regclass, 'm_join'::regclass, 'm_total'::regclass,
	                      'm_mv'::regclass)});

# Times to check: every commit time and the one before it, from the as-of.
my %times = ($as_of => 1);
for my $op (@ops)
{
	for my $t ($op->[0], $op->[0] - 1)
	{
		$times{$t} = 1 if $t >= $as_of;
	}
}
my @times = sort { $a <=> $b } keys %times;
ok(@times > 100, 'checking ' . scalar(@times) . ' times');

# The model at each time.
my %model;	# time -> view -> text
{
	my (%a, %b);
	my $i = 0;
	for my $t (@times)
	{
		while ($i < @ops && $ops[$i][0] <= $t)
		{
			$ops[$i][3]->(\%a, \%b);
			$i++;
		}
		$model{$t} = model_views(\%a, \%b);
	}
}

# The views at each time, read in one query per view.
my $tlist = join ',', @times;
for my $mv ('m_filter', 'm_join', 'm_total', 'm_mv')
{
	my $rows = $node->safe_psql('postgres', qq{
		SELECT t, (SELECT coalesce(string_agg(x::text, ' ' ORDER BY x::text COLLATE "C"), '')
		             FROM mzcoord.read_at(NULL::$mv, t) x)
		  FROM unnest('{$tlist}'::bigint[]) t ORDER BY t});
	my @wrong;
	my %distinct;
	for my $line (split /\n/, $rows)
	{
		my ($t, $got) = split /\|/, $line, 2;
		$got //= '';
		$distinct{$got} = 1;
		push @wrong, "at $t: view '$got', model '$model{$t}{$mv}'"
		  if $got ne $model{$t}{$mv};
	}
	is(scalar(@wrong), 0, "$mv equals the model at every time")
	  or diag(join("\n", @wrong[0 .. ($#wrong < 5 ? $#wrong : 5)]));
	ok(keys(%distinct) > 10, "$mv changed over time (" . scalar(keys %distinct) . ' states)');
	# Its relation: the model at the end.
	my $rel = $node->safe_psql('postgres', qq{
		SELECT coalesce(string_agg(x::text, ' ' ORDER BY x::text COLLATE "C"), '') FROM $mv x});
	is($rel, $model{ $times[-1] }{$mv}, "$mv relation equals the model now");
}

is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'check_consistency() is clean');
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.maintenance_status WHERE failures > 0'),
	'0', 'no refresh failed');

$node->stop;
# A refresh step that leaks a pinned descriptor or buffer warns at commit.
my @leaks = grep { /reference leak|leaked/ } split /\n/, slurp_file($node->logfile);
is(scalar(@leaks), 0, 'no refresh leaked a resource')
  or diag(join("\n", @leaks[0 .. ($#leaks < 3 ? $#leaks : 3)]));
done_testing();
