#!/usr/bin/perl
# Checks the shape of the source tree (doc/architecture.md):
#
#  1. every module (X.c and X.h in one folder of src/) has a unique name;
#  2. a header X.h declares only functions that X.c defines, and X.c
#     includes X.h (one owner per header);
#  3. a file includes headers of its own plane or of lower planes only, in
#     the order core < base < records < timeline < controller < funcs <
#     storage, catalog < compute < worker < init (storage and catalog never
#     include each other);
#  4. the pure core includes no PostgreSQL header and no plane header;
#  5. the module include graph has no cycle;
#  6. every source path cited in the documents (README.md, doc/*.md but the
#     dated design log, which keeps the paths of its day), in the tests,
#     bench/, scripts/ and in comments of src/ names something that exists
#     (a cited "src/" path, and a bare file name such as foo.c or foo.h in
#     prose or comments must be a file under src/ or test/, or one of the
#     PostgreSQL source files in %pg_files).  The frozen install scripts of
#     released versions are not checked;
#  7. every function a header of src/ declares (an exported symbol) has a
#     caller: it is named in a .c file of src/ other than the one that
#     defines it, or is SQL-callable (PG_FUNCTION_INFO_V1), or is named in a
#     string (a background worker's entry point, by bgw_function_name).  A
#     function of the pure core may instead be called by its own file: the
#     library runs it, and it is exported for its unit test.  Code that only
#     the tests use lives under test/unit, not in the library, except the
#     few entry points into the collections' state machine in %unit_entry;
#  8. no file outside src/storage/ opens or scans an index itself
#     (index_open, index_beginscan, index_rescan, index_getnext_slot,
#     index_getnext_tid, try_index_open): storage owns every read of a
#     history, through mzcoord_history_open_read and its time scans
#     (history.h).  Catalog scans through systable_beginscan are not index
#     reads of a history and stay allowed.
#
# Usage: scripts/check_shape.pl [source root, default: the repository's src]
# Exits 1 and names each violation; prints a summary otherwise.
use strict;
use warnings;
use File::Basename;
use FindBin;

my $src = shift // "$FindBin::Bin/../src";
my %rank = (core => 0, base => 1, records => 2, timeline => 3, controller => 4,
			funcs => 5, storage => 6, catalog => 6, compute => 7, worker => 8, init => 9);
my (%plane_of, %files_of, %edges, @bad);

sub slurp { local (@ARGV, $/) = @_; return <> }

for my $plane (sort keys %rank)
{
	for my $f (sort glob("$src/$plane/*.[ch]"))
	{
		my ($m) = fileparse($f, qr{\.[ch]});
		push @bad, "$f: module \"$m\" also exists in $plane_of{$m}"
		  if exists $plane_of{$m} && $plane_of{$m} ne $plane;
		$plane_of{$m} = $plane;
		push @{ $files_of{$m} }, $f;
	}
}
for my $d (glob("$src/*"))
{
	if (!-d $d)
	{
		push @bad, "$d: source file outside any plane folder" if $d =~ /\.[ch]$/;
		next;
	}
	my $p = basename($d);
	push @bad, "$d: folder is not a known plane" unless exists $rank{$p} || $p eq 'sql';
}

for my $m (sort keys %files_of)
{
	my $plane = $plane_of{$m};
	my ($c) = grep { /\.c$/ } @{ $files_of{$m} };
	my ($h) = grep { /\.h$/ } @{ $files_of{$m} };

	for my $f (@{ $files_of{$m} })
	{
		my $text = slurp($f);
		while ($text =~ /^#include\s+"([^"]+)"/mg)
		{
			my $inc = $1;
			if ($plane eq 'core')
			{
				push @bad, "$f: the pure core includes \"$inc\""
				  unless $inc =~ m{^[a-z_]+\.h$} && ($plane_of{ $inc =~ s/\.h$//r } // '') eq 'core';
				next;
			}
			next if $inc =~ m{/} || $inc eq 'postgres.h' || $inc eq 'fmgr.h'
			  || $inc eq 'funcapi.h' || $inc eq 'miscadmin.h' || $inc eq 'pgstat.h';
			my $to = $inc =~ s/\.h$//r;
			if (!exists $plane_of{$to})
			{
				push @bad, "$f: includes \"$inc\", which is no module of src/";
				next;
			}
			next if $to eq $m;
			my $tp = $plane_of{$to};
			push @bad, "$f ($plane) includes $inc ($tp): a plane includes only its own or lower planes"
			  if $rank{$tp} > $rank{$plane} || ($rank{$tp} == $rank{$plane} && $tp ne $plane);
			$edges{$m}{$to} = 1;
		}
	}

	next unless $h && $plane ne 'core';
	my $htext = slurp($h);
	my $ctext = $c ? slurp($c) : '';
	push @bad, "$c: does not include its own header " . basename($h)
	  if $c && $ctext !~ /^#include\s+"\Q$m\E\.h"/m;
	# Function declarations: "extern <type> name(" possibly over lines.
	while ($htext =~ /^extern\s[^;]*?\b([a-z_][a-z0-9_]*)\s*\(/mg)
	{
		my $fn = $1;
		push @bad, "$h declares $fn(), which " . ($c ? basename($c) : "no $m.c") . " does not define"
		  unless $ctext =~ /^\Q$fn\E\(/m;
	}
}

# Cycles: depth-first search with colours.
my %colour;
my @stack;
sub visit
{
	my ($m) = @_;
	$colour{$m} = 1;
	push @stack, $m;
	for my $to (sort keys %{ $edges{$m} })
	{
		if (($colour{$to} // 0) == 1)
		{
			my @cyc = @stack[(grep { $stack[$_] eq $to } 0 .. $#stack)[0] .. $#stack];
			push @bad, "include cycle: " . join(' -> ', @cyc, $to);
		}
		visit($to) unless $colour{$to};
	}
	pop @stack;
	$colour{$m} = 2;
}
visit($_) for grep { !$colour{$_} } sort keys %files_of;

# 6. Cited paths.  Citations of PostgreSQL's own sources are allowed by name.
my %pg_files = map { $_ => 1 } qw(
  postgres.h fmgr.h funcapi.h miscadmin.h pgstat.h
  slot.c worker_spi.c pg_stat_statements.c bgworker.c
);
my $top = dirname($src);
my %known;
{
	my @dirs = ("$top/src", "$top/test");
	while (my $d = shift @dirs)
	{
		for my $e (glob("$d/*"))
		{
			if (-d $e) { push @dirs, $e; next; }
			$known{ basename($e) } = 1;
		}
	}
}

# The parts of a file that cite: all of it for paths; for bare names, all
# of a document and only the comments of code (aliases like s.c in SQL).
sub comments_of
{
	my ($f, $text) = @_;
	return $text if $f =~ /\.md$/;
	if ($f =~ /\.[ch]$/)
	{
		my @c = $text =~ m{(/\*.*?\*/|//[^\n]*)}sg;
		return join("\n", @c);
	}
	my $mark = $f =~ /\.(sql|spec|replace)$/ ? '--' : '#';
	return join("\n", $text =~ /\Q$mark\E([^\n]*)/g);
}

my @cite_files = grep { -f } ("$top/README.md", grep { !/design-log\.md$/ } glob("$top/doc/*.md"));
{
	my @dirs = ("$top/src", "$top/test", "$top/sql", "$top/bench", "$top/scripts");
	while (my $d = shift @dirs)
	{
		for my $e (sort glob("$d/*"))
		{
			# Released install scripts are frozen; this script names patterns.
			next if $e =~ m{/(results|expected|frozen)$} || $e eq "$top/scripts/check_shape.pl";
			if (-d $e) { push @dirs, $e; next; }
			push @cite_files, $e if $e =~ /\.(c|h|sql|replace|pl|pm|sh|spec|py|conf)$/;
		}
	}
}
for my $f (@cite_files)
{
	my $text = slurp($f);
	my $rel = $f =~ s{^\Q$top\E/}{}r;
	my %seen;
	while ($text =~ m~(?<![\w/.-])(src/[\w./-]*)([*\[{<\$%]?)~g)
	{
		my ($path, $glob) = ($1, $2);
		next if $glob;			# a pattern such as src/sql/NN_*.sql
		$path =~ s/[.-]+$//;
		next if $seen{$path}++;
		push @bad, "$rel cites $path, which does not exist" unless -e "$top/$path";
	}
	my $prose = comments_of($f, $text);
	while ($prose =~ m{(?<![\w/.\$-])([A-Za-z_][\w-]*\.[ch])(?![\w/(-])}g)
	{
		my $name = $1;
		next if $seen{$name}++ || $known{$name} || $pg_files{$name};
		push @bad, "$rel cites $name, which is no file of src/ or test/";
	}
}

# 7. Exported functions without a caller.  Comments do not call.
# Entry points into collections.c that only its unit tests use (read
# access to a slot, the raw batch of S7, where a slot holds its
# dependencies): they are built on the state machine's static helpers, so
# they cannot move to test/unit.
my %unit_entry = map { $_ => 1 } qw(
  mzc_coll_get mzc_coll_update mzc_coll_dep_frontier
);
{
	my (%code, %definer, %sql);
	for my $f (sort glob("$src/*/*.c"))
	{
		my $text = slurp($f) =~ s{/\*.*?\*/}{ }sgr;
		$code{$f} = $text;
		$definer{$1} = $f while $text =~ /^([a-z_][a-z0-9_]*)\(/mg;
		$sql{$1} = 1 while $text =~ /PG_FUNCTION_INFO_V1\((\w+)\)/g;
	}
	for my $h (sort glob("$src/*/*.h"))
	{
		my $htext = slurp($h);
		while ($htext =~ /^extern\s[^;]*?\b([a-z_][a-z0-9_]*)\s*\(/mg)
		{
			my $fn = $1;
			my $def = $definer{$fn} // '';
			next if $sql{$fn} || $unit_entry{$fn};
			next if grep { $code{$_} =~ /"\Q$fn\E"/ } keys %code;
			next if grep { $_ ne $def && $code{$_} =~ /\b\Q$fn\E\b/ } keys %code;
			next if $def =~ m{/core/[^/]+$}
			  && ($code{$def} =~ s/^\Q$fn\E\(//mr) =~ /\b\Q$fn\E\s*\(/;
			push @bad, ($h =~ s{^\Q$top\E/}{}r) . " declares $fn(), which no other file of src/ calls: "
			  . "make it static, or move what only the tests use to test/unit";
		}
	}
}

# 8. No history index opened or scanned outside storage.
for my $plane (sort grep { $_ ne 'storage' } keys %rank)
{
	for my $f (sort glob("$src/$plane/*.[ch]"))
	{
		my $text = slurp($f);
		my %seen;
		while ($text =~ /\b(index_open|index_beginscan|index_rescan|index_getnext_slot|index_getnext_tid|try_index_open)\s*\(/g)
		{
			push @bad, "$f calls $1(): only storage reads histories through their indexes (history.h)"
			  unless $seen{$1}++;
		}
	}
}

if (@bad)
{
	print STDERR "$_\n" for @bad;
	printf STDERR "check_shape: %d violation(s)\n", scalar @bad;
	exit 1;
}
my $nedges = 0;
$nedges += keys %{ $edges{$_} } for keys %edges;
printf "check_shape: %d modules in %d planes, %d include edges, no cycle\n",
  scalar(keys %files_of), scalar(grep { my $p = $_; grep { $plane_of{$_} eq $p } keys %plane_of } keys %rank),
  $nedges;
exit 0;
