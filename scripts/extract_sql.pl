#!/usr/bin/perl
# Emits, for an upgrade script, the current definitions of functions and
# views that an upgrade changes, taken from the install script's fragments
# so that no definition is copied by hand.
#
# Usage: scripts/extract_sql.pl LIST FRAGMENT...
#
# LIST has one entry per line (# starts a comment):
#
#   mzcoord.name                 the function or view mzcoord.name, emitted
#                                as CREATE OR REPLACE FUNCTION / VIEW;
#   drop mzcoord.name(types)     emitted as DROP FUNCTION mzcoord.name(types)
#                                before every definition (for a function
#                                whose signature changed: list its new name
#                                too, and restate its privileges, which go
#                                with the old function, in the upgrade).
#
# Each name must be defined by exactly one CREATE statement of the
# fragments (an overloaded name is refused: list it once per need and
# split it by hand).  The statement is copied verbatim, from its CREATE to
# the semicolon that ends it outside quotes, dollar quotes and comments;
# only "CREATE" becomes "CREATE OR REPLACE".  Exits non-zero, naming the
# entry, if a name is missing or defined more than once.
use strict;
use warnings;

die "usage: $0 LIST FRAGMENT...\n" unless @ARGV >= 2;
my ($list, @fragments) = @ARGV;

sub slurp { local (@ARGV, $/) = @_; return <> }

my (@names, @drops);
for my $line (split /\n/, slurp($list))
{
	$line =~ s/#.*//;
	$line =~ s/^\s+|\s+$//g;
	next if $line eq '';
	if ($line =~ /^drop\s+(\S.*)$/)
	{
		push @drops, $1;
	}
	elsif ($line =~ /^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/)
	{
		push @names, $line;
	}
	else
	{
		die "$list: cannot read entry \"$line\"\n";
	}
}

# The statement that starts at offset $start of $text: up to and including
# the first semicolon outside quotes, dollar quotes and comments.
sub statement_at
{
	my ($text, $start) = @_;
	pos($text) = $start;
	while (pos($text) < length($text))
	{
		if ($text =~ /\G;/gc)
		{
			return substr($text, $start, pos($text) - $start);
		}
		elsif ($text =~ /\G(\$[A-Za-z_0-9]*\$)/gc)
		{
			my $tag = $1;
			my $end = index($text, $tag, pos($text));
			die "unterminated dollar quote $tag\n" if $end < 0;
			pos($text) = $end + length($tag);
		}
		elsif ($text =~ /\G'(?:[^']|'')*'/gc || $text =~ /\G"(?:[^"]|"")*"/gc
			   || $text =~ /\G--[^\n]*/gc || $text =~ m{\G/\*.*?\*/}gcs
			   || $text =~ /\G[^;\$'"\-\/]+/gc || $text =~ /\G./gcs)
		{
			next;
		}
	}
	die "statement at offset $start does not end\n";
}

my %found;
for my $f (@fragments)
{
	my $text = slurp($f);
	while ($text =~ /^CREATE\s+(?:OR\s+REPLACE\s+)?(FUNCTION|VIEW)\s+([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)\b/mg)
	{
		my ($kind, $name) = ($1, $2);
		next unless grep { $_ eq $name } @names;
		my $start = $-[0];
		push @{ $found{$name} },
		  { file => $f, kind => $kind, sql => statement_at($text, $start) };
		pos($text) = $start + 1;
	}
}

my @out;
push @out, "DROP FUNCTION $_;\n" for @drops;
for my $name (@names)
{
	my $defs = $found{$name} // [];
	die "$list: $name is defined by no fragment\n" if @$defs == 0;
	die "$list: $name is defined more than once ("
	  . join(', ', map { $_->{file} } @$defs) . ")\n" if @$defs > 1;
	my $d = $defs->[0];
	(my $sql = $d->{sql}) =~ s/^CREATE\s+(?:OR\s+REPLACE\s+)?/CREATE OR REPLACE /;
	push @out, "-- $name, from $d->{file}\n$sql\n";
}
print join("\n", @out);
