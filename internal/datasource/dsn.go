package datasource

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// A SQL data source connects with the value of its database_url credential; the config's
// host, port, database and ssl_mode (path for SQLite) override the matching parts of it, or
// make up the whole connection when there is no credential (a server that needs no password):
//   - postgres: a postgres:// (or postgresql://) URL, or a keyword/value string
//     ("host=… dbname=…");
//   - mysql: the driver's DSN (user:pass@tcp(host:3306)/db) or a mysql:// URL;
//   - sqlite: a file path or a file: URL.
// Unix sockets are refused (a TCP host is required), and nothing is taken from the server's
// own environment (PGPASSWORD, ~/.pgpass): a password is the credential's or none.

const dialTimeout = 10 * time.Second

// postgresConfig builds the pgx connection config of a postgres data source.
func postgresConfig(secret string, cfg *Config) (*pgx.ConnConfig, error) {
	dsn, password := strings.TrimSpace(secret), ""
	if dsn == "" {
		if cfg.Host == "" {
			return nil, sourceErr("a postgres data source needs a database_url credential (postgres://user:password@host:5432/db) or config.host")
		}
		dsn = "postgres://"
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, sourceErr("the database_url credential is not a valid postgres:// URL")
		}
		password, _ = u.User.Password()
		host, port := u.Hostname(), u.Port()
		if cfg.Host != "" {
			host = cfg.Host
		}
		if cfg.Port != 0 {
			port = strconv.Itoa(cfg.Port)
		}
		u.Host = host
		if port != "" {
			u.Host = net.JoinHostPort(host, port)
		} else if strings.Contains(host, ":") {
			u.Host = "[" + host + "]"
		}
		if cfg.Database != "" {
			u.Path = "/" + cfg.Database
		}
		q := u.Query()
		if cfg.SSLMode != "" {
			q.Set("sslmode", cfg.SSLMode)
		}
		if q.Get("sslmode") == "" {
			q.Set("sslmode", "prefer")
		}
		u.RawQuery = q.Encode()
		dsn = u.String()
	} else {
		for _, kv := range [][2]string{{"host", cfg.Host}, {"port", portString(cfg.Port)}, {"dbname", cfg.Database}, {"sslmode", cfg.SSLMode}} {
			if kv[1] != "" {
				dsn += " " + kv[0] + "='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(kv[1]) + "'"
			}
		}
		password = keywordValue(dsn, "password")
	}
	cc, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the connection string: say only what is wrong.
		return nil, sourceErr("the database_url credential is not a valid PostgreSQL connection string")
	}
	cc.Password = password // never one from the server's environment or ~/.pgpass
	hosts := []string{cc.Host}
	for _, f := range cc.Fallbacks {
		hosts = append(hosts, f.Host)
	}
	for _, h := range hosts {
		if h == "" || strings.HasPrefix(h, "/") {
			return nil, sourceErr("a postgres data source must name a TCP host (unix sockets are not allowed)")
		}
	}
	if cc.ConnectTimeout == 0 || cc.ConnectTimeout > dialTimeout {
		cc.ConnectTimeout = dialTimeout
	}
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	cc.RuntimeParams["application_name"] = "agentplane data source"
	return cc, nil
}

func portString(p int) string {
	if p == 0 {
		return ""
	}
	return strconv.Itoa(p)
}

// keywordValue reads key from a libpq keyword/value string (the last occurrence wins).
func keywordValue(dsn, key string) string {
	val := ""
	for i := 0; i < len(dsn); {
		for i < len(dsn) && dsn[i] == ' ' {
			i++
		}
		eq := strings.IndexByte(dsn[i:], '=')
		if eq < 0 {
			break
		}
		k := strings.TrimSpace(dsn[i : i+eq])
		i += eq + 1
		for i < len(dsn) && dsn[i] == ' ' {
			i++
		}
		var v strings.Builder
		if i < len(dsn) && dsn[i] == '\'' {
			i++
			for i < len(dsn) && dsn[i] != '\'' {
				if dsn[i] == '\\' && i+1 < len(dsn) {
					i++
				}
				v.WriteByte(dsn[i])
				i++
			}
			i++
		} else {
			for i < len(dsn) && dsn[i] != ' ' {
				v.WriteByte(dsn[i])
				i++
			}
		}
		if k == key {
			val = v.String()
		}
	}
	return val
}

// mysqlTLS maps ssl_mode to the MySQL driver's tls setting.
var mysqlTLS = map[string]string{"disable": "false", "allow": "preferred", "prefer": "preferred", "require": "skip-verify", "verify-ca": "true", "verify-full": "true"}

// mysqlConfig builds the driver config of a mysql data source.
func mysqlConfig(secret string, cfg *Config) (*mysql.Config, error) {
	secret = strings.TrimSpace(secret)
	var mc *mysql.Config
	switch {
	case secret == "":
		if cfg.Host == "" {
			return nil, sourceErr("a mysql data source needs a database_url credential (user:password@tcp(host:3306)/db) or config.host")
		}
		mc = mysql.NewConfig()
		mc.Net = "tcp"
	case strings.HasPrefix(secret, "mysql://") || strings.HasPrefix(secret, "mariadb://"):
		u, err := url.Parse(secret)
		if err != nil {
			return nil, sourceErr("the database_url credential is not a valid mysql:// URL")
		}
		mc = mysql.NewConfig()
		mc.Net, mc.Addr = "tcp", u.Host
		mc.User = u.User.Username()
		mc.Passwd, _ = u.User.Password()
		mc.DBName = strings.TrimPrefix(u.Path, "/")
		if tls := u.Query().Get("tls"); tls != "" {
			mc.TLSConfig = tls
		}
	default:
		var err error
		if mc, err = mysql.ParseDSN(secret); err != nil {
			return nil, sourceErr("the database_url credential is neither a MySQL DSN (user:password@tcp(host:3306)/db) nor a mysql:// URL")
		}
	}
	if mc.Net != "tcp" && mc.Net != "tcp6" && mc.Net != "" {
		return nil, sourceErr("a mysql data source must connect over tcp (unix sockets are not allowed)")
	}
	host, port, err := net.SplitHostPort(mc.Addr)
	if err != nil {
		host, port = strings.Trim(mc.Addr, "[]"), "3306"
	}
	if cfg.Host != "" {
		host = cfg.Host
	}
	if cfg.Port != 0 {
		port = strconv.Itoa(cfg.Port)
	}
	if host == "" {
		return nil, sourceErr("a mysql data source must name a TCP host")
	}
	mc.Net, mc.Addr = "tcp", net.JoinHostPort(host, port)
	if cfg.Database != "" {
		mc.DBName = cfg.Database
	}
	if cfg.SSLMode != "" {
		mc.TLSConfig = mysqlTLS[cfg.SSLMode]
	}
	// Forced whatever the DSN says: parameters are bound by the server, one statement per
	// query, no LOAD DATA LOCAL INFILE from this server's files.
	mc.InterpolateParams = false
	mc.MultiStatements = false
	mc.AllowAllFiles = false
	mc.ParseTime = true
	mc.Loc = time.UTC
	if mc.Timeout == 0 || mc.Timeout > dialTimeout {
		mc.Timeout = dialTimeout
	}
	mc.Logger = log.New(io.Discard, "", 0) // errors reach the caller; the driver's own log would only repeat them
	return mc, nil
}

// sqlitePath finds the file of a sqlite data source: config.path, else the credential's
// path or file: URL; the file must not lie under a denied directory (the server's own data).
func sqlitePath(secret string, cfg *Config, deny []string) (string, error) {
	p := cfg.Path
	if p == "" {
		p = strings.TrimSpace(secret)
	}
	if strings.HasPrefix(p, "file:") {
		u, err := url.Parse(p)
		if err != nil {
			return "", sourceErr("the sqlite data source's file: URL is not valid")
		}
		p = u.Path
		if p == "" {
			p = u.Opaque
		}
	}
	if p == "" || p == ":memory:" {
		return "", sourceErr("a sqlite data source needs config.path or a database_url credential holding the database file's path")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", sourceErr("the sqlite data source's path is not valid")
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	for _, d := range deny {
		if rd, err := filepath.EvalSymlinks(d); err == nil {
			d = rd
		}
		if rel, err := filepath.Rel(d, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", sourceErr("a sqlite data source may not read the server's own data directory")
		}
	}
	return abs, nil
}

// sqliteDSN opens path read-only, with query_only on every connection.
func sqliteDSN(path string) string {
	return fmt.Sprintf("%s?mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(5000)", (&url.URL{Scheme: "file", Path: path}).String())
}
