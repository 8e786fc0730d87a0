package assets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentplane/agentplane/internal/blob"
	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// forEachStore runs fn on SQLite and, with TEST_DATABASE_URL, on PostgreSQL, each with a
// workspace and blobs in a temporary directory.
func forEachStore(t *testing.T, fn func(t *testing.T, st *store.Store, blobs *blob.Dir, ws string)) {
	run := func(t *testing.T, url string) {
		st, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		w, err := st.WorkspaceCreate(context.Background(), &domain.Workspace{Name: "a", Slug: "a"})
		if err != nil {
			t.Fatal(err)
		}
		blobs, err := blob.NewDir(filepath.Join(t.TempDir(), "blobs"))
		if err != nil {
			t.Fatal(err)
		}
		fn(t, st, blobs, w.ID)
	}
	t.Run("sqlite", func(t *testing.T) { run(t, "file:"+filepath.Join(t.TempDir(), "a.db")) })
	t.Run("postgres", func(t *testing.T) {
		u := dbtest.PostgresURL(t)
		if u == "" {
			t.Skip(dbtest.SkipMessage)
		}
		run(t, u)
	})
}

// Concurrent runs storing the same image share one blob; deleting every asset removes it.
func TestConcurrentDedup(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *store.Store, blobs *blob.Dir, ws string) {
		ctx := context.Background()
		svc := New(st, blobs, 0)
		img := bytes.Repeat([]byte("img"), 1000)
		var wg sync.WaitGroup
		ids := make([]string, 8)
		errs := make([]error, 8)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, err := svc.Create(ctx, Input{WorkspaceID: ws, ExecutionID: fmt.Sprint("x", i), MimeType: "image/png", Source: domain.AssetSourceModel}, img)
				if err == nil {
					ids[i] = a.ID
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		s, err := svc.Storage(ctx, ws)
		if err != nil || s.Count != 8 || s.Blobs != 1 || s.Bytes != int64(len(img)) {
			t.Fatalf("storage %+v %v", s, err)
		}
		// Deletes racing with new creates of the same content never leave an asset without
		// bytes, also when they come from two nodes (two services, each with its own locks,
		// sharing the database and the blob directory).
		node2 := New(st, blobs, 0)
		for i, id := range ids {
			wg.Add(2)
			go func() { defer wg.Done(); _, errs[i] = svc.Delete(ctx, ws, id) }()
			go func() {
				defer wg.Done()
				if a, err := node2.Create(ctx, Input{WorkspaceID: ws, MimeType: "image/png", Source: domain.AssetSourceUpload}, img); err == nil {
					ids[i] = a.ID
				} else {
					t.Error(err)
				}
			}()
			wg.Wait()
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
		}
		for _, id := range ids {
			_, f, err := svc.Open(ctx, ws, id)
			if err != nil {
				t.Fatalf("asset %s lost its content: %v", id, err)
			}
			got, _ := io.ReadAll(f)
			f.Close()
			if !bytes.Equal(got, img) {
				t.Fatal("content changed")
			}
		}
		for _, id := range ids {
			if _, err := svc.Delete(ctx, ws, id); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := blobs.Stat(ctx, ws, blob.Sum(img)); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("blob left after the last asset: %v", err)
		}
		if s, _ := svc.Storage(ctx, ws); s.Count != 0 || s.Bytes != 0 || s.Blobs != 0 {
			t.Fatalf("storage after deletes %+v", s)
		}
	})
}

// A quota refusal stores nothing; concurrent creates of different contents never go past it.
func TestQuota(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *store.Store, blobs *blob.Dir, ws string) {
		ctx := context.Background()
		svc := New(st, blobs, 1000)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok, refused := 0, 0
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				data := bytes.Repeat([]byte{byte(i)}, 300)
				_, err := svc.Create(ctx, Input{WorkspaceID: ws, MimeType: "image/png", Source: domain.AssetSourceModel}, data)
				var qe *store.QuotaError
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ok++
				case errors.As(err, &qe):
					refused++
					if _, serr := blobs.Stat(ctx, ws, blob.Sum(data)); !errors.Is(serr, blob.ErrNotFound) {
						t.Errorf("a refused content was written: %v", serr)
					}
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if ok != 3 || refused != 7 {
			t.Fatalf("%d stored, %d refused; want 3 and 7 (quota 1000, 300 each)", ok, refused)
		}
		if s, _ := svc.Storage(ctx, ws); s.Bytes != 900 || s.QuotaBytes != 1000 {
			t.Fatalf("storage %+v", s)
		}
		if _, err := svc.Create(ctx, Input{WorkspaceID: ws, Source: domain.AssetSourceUpload}, make([]byte, MaxSize+1)); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("too large: %v", err)
		}
	})
}

// A recorded blob whose file was lost is written again by the next asset of that content.
func TestLostBlobRewritten(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *store.Store, blobs *blob.Dir, ws string) {
		ctx := context.Background()
		svc := New(st, blobs, 0)
		data := []byte("audio bytes")
		a, err := svc.Create(ctx, Input{WorkspaceID: ws, MimeType: "audio/wav", Source: domain.AssetSourceMCP}, data)
		if err != nil || a.Type != domain.AssetAudio {
			t.Fatalf("%+v %v", a, err)
		}
		if err := blobs.Delete(ctx, ws, a.SHA256); err != nil {
			t.Fatal(err)
		}
		if _, _, err := svc.Open(ctx, ws, a.ID); !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("open without bytes: %v", err)
		}
		if _, err := svc.Create(ctx, Input{WorkspaceID: ws, MimeType: "audio/wav", Source: domain.AssetSourceMCP}, data); err != nil {
			t.Fatal(err)
		}
		_, f, err := svc.Open(ctx, ws, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	})
}

func TestTypes(t *testing.T) {
	for in, want := range map[string][2]string{
		"image/png":                {"image/png", "image"},
		"IMAGE/JPEG; q=1":          {"image/jpeg", "image"},
		"audio/mpeg":               {"audio/mpeg", "audio"},
		"application/pdf":          {"application/pdf", "file"},
		"":                         {"application/octet-stream", "file"},
		"nonsense":                 {"application/octet-stream", "file"},
		"text/csv; charset=utf-8":  {"text/csv", "file"},
		"image/svg+xml":            {"image/svg+xml", "image"},
		"application/octet-stream": {"application/octet-stream", "file"},
	} {
		mt := NormalizeMIME(in)
		if mt != want[0] || TypeOf(mt) != want[1] {
			t.Errorf("%q: %q %q", in, mt, TypeOf(mt))
		}
	}
}
