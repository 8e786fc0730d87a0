// Package dbtest gives tests a PostgreSQL schema of their own on the database named by
// TEST_DATABASE_URL, and a MySQL/MariaDB database of their own on the server named by
// TEST_MYSQL_URL, so that tests of every package can run on them side by side.
package dbtest

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"testing"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for database/sql
)

// PostgresURL returns a URL of the database at TEST_DATABASE_URL whose search_path is a fresh
// schema, dropped when the test ends; "" when the variable is unset (the caller skips or
// logs, saying so).
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		return ""
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	schema := "t_" + randomHex()
	if _, err := admin.ExecContext(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if a, err := sql.Open("pgx", base); err == nil {
			_, _ = a.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			a.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// PostgresDatabaseURL returns the URL of a fresh database on the PostgreSQL server at
// TEST_DATABASE_URL, dropped when the test ends, for tests that need a database of their own
// (a VACUUM frees only rows older than every open transaction of its database, and other
// tests share TEST_DATABASE_URL's); "" when the variable is unset. It skips the test when the
// server refuses CREATE DATABASE.
func PostgresDatabaseURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		return ""
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	name := "agentplane_test_" + randomHex()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		t.Skipf("cannot create a database of its own: %v", err)
	}
	t.Cleanup(func() {
		_, _ = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close()
	})
	u, err := withDatabase(base, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// SkipMessage is what a test skipped for want of TEST_DATABASE_URL says.
const SkipMessage = "TEST_DATABASE_URL is not set: skipping the PostgreSQL run (set it to a postgres:// URL to run it)"

// MySQLURL returns a DSN (user:password@tcp(host:port)/db) of a fresh database on the MySQL or
// MariaDB server at TEST_MYSQL_URL, dropped when the test ends; "" when the variable is unset
// (the caller skips, saying so with MySQLSkipMessage).
func MySQLURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TEST_MYSQL_URL")
	if base == "" {
		return ""
	}
	cfg, err := mysql.ParseDSN(base)
	if err != nil {
		t.Fatalf("TEST_MYSQL_URL: %v", err)
	}
	admin, err := sql.Open("mysql", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := "t_" + randomHex()
	if _, err := admin.ExecContext(context.Background(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		if a, err := sql.Open("mysql", base); err == nil {
			_, _ = a.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name)
			a.Close()
		}
	})
	cfg.DBName = name
	return cfg.FormatDSN()
}

// MySQLSkipMessage is what a test skipped for want of TEST_MYSQL_URL says.
const MySQLSkipMessage = "TEST_MYSQL_URL is not set: skipping the MySQL/MariaDB run (set it to a DSN such as root@tcp(127.0.0.1:3306)/test)"
