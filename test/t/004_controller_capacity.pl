# Full shared-memory tables are a clear error (SQLSTATE 53400) that changes
# nothing.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MzcoordTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# One role fills the whole table here: the per-role share (half by
# default) is raised above it.
my $node = mzcoord_node('capacity', create_extension => 1, conf => q{
mzcoord.max_collections = 16
mzcoord.max_collections_per_role = 100
mzcoord.max_holds = 64
});

# Sixteen collections fit; the seventeenth does not.
$node->safe_psql('postgres', join("\n",
	map { "CREATE TABLE c$_ (a int); SELECT mzcoord.create_table('c$_');" } 1 .. 16));
$node->safe_psql('postgres', 'CREATE TABLE c17 (a int)');
my ($ret, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT mzcoord.create_table('c17');");
like($err, qr/53400: too many mzcoord collections/, 'a full collection table is 53400');
like($err, qr/Raise mzcoord.max_collections/, 'with a hint');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM mzcoord.items WHERE name = 'c17'}),
	'0', 'no catalog row was left');
is($node->safe_psql('postgres',
		q{SELECT collections FROM mzcoord.controller_status()}),
	'16', 'the controller still has sixteen');

# Sixty-four holds fit in one transaction (with the per-session and
# per-role limits, a quarter and half of the table by default, raised above
# it); the sixty-fifth does not, and the failed call adds none.
($ret, $out, $err) = $node->psql('postgres', q{
\set VERBOSITY verbose
SET mzcoord.max_holds_per_backend = 100;
SET mzcoord.max_holds_per_role = 100;
BEGIN;
SELECT count(mzcoord.acquire_read_hold(ARRAY['c1'::regclass])) FROM generate_series(1, 64);
SELECT count(*) AS holds FROM mzcoord.holds;
SAVEPOINT s;
SELECT mzcoord.acquire_read_hold(ARRAY['c2'::regclass]);
ROLLBACK TO s;
SELECT count(*) AS holds FROM mzcoord.holds;
COMMIT;
}, on_error_stop => 0);
like($err, qr/53400: too many mzcoord read holds/, 'full hold table is 53400');
like($err, qr/All 64 hold entries/, 'naming the full table');
like($out, qr/^64\n64\n64$/m, 'the failed call added no hold');
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.holds'),
	'0', 'all released at commit');
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'consistent');

# Dropping frees room.
$node->safe_psql('postgres', 'DROP TABLE c16');
$node->poll_query_until('postgres', 'SELECT collections < 16 FROM mzcoord.controller_status()')
  or die 'slot not freed';
$node->safe_psql('postgres', "SELECT mzcoord.create_table('c17')");
pass('a dropped collection makes room');
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'consistent');

# Catalog changes reserve what publishing them needs, computed from the live
# graph, not a worst case per change: the whole table can be dropped in one
# statement and filled in one transaction.
$node->safe_psql('postgres', 'DROP TABLE ' . join(', ', map { "c$_" } 1 .. 15, 17));
$node->poll_query_until('postgres', 'SELECT collections = 0 FROM mzcoord.controller_status()')
  or die 'slots not freed';
my $create = sub {
	my ($n) = @_;
	return "BEGIN;\n" . join("\n",
		map { "CREATE TABLE b$_ (a int); SELECT mzcoord.create_table('b$_');" } 1 .. $n)
	  . "\nCOMMIT;";
};
($ret, $out, $err) = $node->psql('postgres', $create->(16));
is($ret, 0, 'sixteen tables registered in one transaction') or diag($err);
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.holds'),
	'0', 'no hold is left');

# A transaction whose changes do not fit names the setting to raise.
($ret, $out, $err) = $node->psql('postgres', q{
\set VERBOSITY verbose
BEGIN;
SELECT count(mzcoord.set_retain_history('b1', make_interval(secs => 3600 + g)))
  FROM generate_series(1, 400) g;
COMMIT;
});
like($err, qr/53400: too many mzcoord catalog changes in one transaction/,
	'more policy changes than the count pool can publish is 53400');
like($err, qr/Raise mzcoord.max_collections/, 'with a hint naming the setting');
$node->safe_psql('postgres', 'DROP TABLE ' . join(', ', map { "b$_" } 1 .. 16));
$node->poll_query_until('postgres', 'SELECT collections = 0 FROM mzcoord.controller_status()')
  or die 'slots not freed';
($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n" . $create->(17));
like($err, qr/53400: too many mzcoord collections/, 'seventeen in one transaction is 53400');
like($err, qr/Raise mzcoord.max_collections/, 'with a hint naming the setting');
is($node->safe_psql('postgres', 'SELECT collections FROM mzcoord.controller_status()'),
	'0', 'nothing was registered');
is($node->safe_psql('postgres', 'SELECT count(*) FROM mzcoord.check_consistency()'),
	'0', 'consistent');

$node->stop;
done_testing();
