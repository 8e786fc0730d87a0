package datasource

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPostgresConfig(t *testing.T) {
	t.Setenv("PGPASSWORD", "server-own-password")
	cfg := &Config{Host: "replica.internal", Port: 6432, Database: "orders", SSLMode: "require"}
	cc, err := postgresConfig("postgres://ro:pw@primary.internal:5432/shop?application_name=x", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cc.Host != "replica.internal" || cc.Port != 6432 || cc.Database != "orders" || cc.User != "ro" || cc.Password != "pw" || cc.TLSConfig == nil {
		t.Fatalf("overrides: %+v", cc.Config)
	}
	cc, err = postgresConfig("host=db.internal user=ro dbname=shop sslmode=disable", &Config{Database: "orders"})
	if err != nil || cc.Host != "db.internal" || cc.Database != "orders" || cc.Password != "" {
		t.Fatalf("keyword/value: %+v %v", cc, err)
	}
	cc, err = postgresConfig(`host=db.internal user=ro password='it\'s' sslmode=disable`, &Config{})
	if err != nil || cc.Password != "it's" {
		t.Fatalf("keyword password: %v", err)
	}
	cc, err = postgresConfig("", &Config{Host: "db.internal", Database: "orders", SSLMode: "disable"})
	if err != nil || cc.Host != "db.internal" || cc.Database != "orders" {
		t.Fatalf("from the config alone: %+v %v", cc, err)
	}
	if cc.Password != "" {
		t.Fatalf("the server's PGPASSWORD was used: %q", cc.Password)
	}
	for _, bad := range []string{"postgres://%zz", "postgres:///db?host=/tmp", "host=/var/run/postgresql dbname=x", "postgres://h/db?sslmode=sometimes"} {
		if _, err := postgresConfig(bad, &Config{}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestKeywordValue(t *testing.T) {
	dsn := `host=a password='p w\'x' user=u password=second`
	if v := keywordValue(dsn, "password"); v != "second" {
		t.Fatalf("last wins: %q", v)
	}
	if v := keywordValue(`password='p w\'x'`, "password"); v != "p w'x" {
		t.Fatalf("quoted: %q", v)
	}
}

func TestMySQLConfig(t *testing.T) {
	mc, err := mysqlConfig("ro:pw@tcp(db.internal:3307)/shop?parseTime=false&multiStatements=true&allowAllFiles=true&interpolateParams=true", &Config{Database: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if mc.Addr != "db.internal:3307" || mc.DBName != "orders" || mc.User != "ro" || mc.Passwd != "pw" {
		t.Fatalf("%+v", mc)
	}
	if !mc.ParseTime || mc.MultiStatements || mc.AllowAllFiles || mc.InterpolateParams {
		t.Fatalf("forced settings not applied: %+v", mc)
	}
	mc, err = mysqlConfig("mysql://ro:p%40ss@db.internal/shop", &Config{Host: "replica.internal", Port: 3310, SSLMode: "verify-full"})
	if err != nil || mc.Addr != "replica.internal:3310" || mc.Passwd != "p@ss" || mc.DBName != "shop" || mc.TLSConfig != "true" {
		t.Fatalf("mysql:// URL: %+v %v", mc, err)
	}
	mc, err = mysqlConfig("", &Config{Host: "db.internal"})
	if err != nil || mc.Addr != "db.internal:3306" {
		t.Fatalf("from the config alone: %+v %v", mc, err)
	}
	for _, bad := range []string{"u@unix(/tmp/s)/db", "::::", "mysql://%zz"} {
		if _, err := mysqlConfig(bad, &Config{}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSQLitePath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.db")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{file, "file:" + file, "file://" + file + "?mode=rw"} {
		p, err := sqlitePath(in, &Config{}, nil)
		if resolved, _ := filepath.EvalSymlinks(file); err != nil || p != resolved {
			t.Errorf("%q: %q %v", in, p, err)
		}
	}
	if _, err := sqlitePath("", &Config{}, nil); err == nil {
		t.Error("no path accepted")
	}
	if _, err := sqlitePath(":memory:", &Config{}, nil); err == nil {
		t.Error(":memory: accepted")
	}
	if _, err := sqlitePath(file, &Config{}, []string{dir}); err == nil {
		t.Error("a denied directory accepted")
	}
	if _, err := sqlitePath(file, &Config{}, []string{dir + "x"}); err != nil {
		t.Errorf("a sibling of a denied directory refused: %v", err)
	}
}
