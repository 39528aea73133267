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

my $node = mzcoord_node('capacity', create_extension => 1, conf => q{
mzcoord.max_collections = 16
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

# Sixty-four holds fit in one transaction; the sixty-fifth does not, and the
# failed call adds none.
($ret, $out, $err) = $node->psql('postgres', q{
\set VERBOSITY verbose
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

$node->stop;
done_testing();
