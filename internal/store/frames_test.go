package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/google/go-cmp/cmp"
)

// TestFramesPacked: a batch of frames long enough is stored compressed, a short one as text,
// and a batch written before migration 00021 (text, packed NULL) still reads; every read,
// from the start or from a frame in the middle of a batch (a stream resumed with
// Last-Event-ID), returns the frames exactly as appended.
func TestFramesPacked(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		var frames []domain.Event
		for i := 1; i <= 40; i++ {
			frames = append(frames, domain.Event{Seq: i, Event: "content", Data: json.RawMessage(fmt.Sprintf(`{"content":"word %d \u00e9 "}`, i))})
		}
		frames = append(frames, domain.Event{Seq: 41, Event: "done", Data: json.RawMessage(`{"output": {"content":"x"},  "time":0.001}`)})
		short := []domain.Event{{Seq: 42, Event: "error", Data: json.RawMessage(`{"message":"late"}`)}}
		old := []domain.Event{{Seq: 43, Event: "content", Data: json.RawMessage(`{"content":"old"}`)}, {Seq: 44, Event: "done", Data: json.RawMessage(`null`)}}
		if err := s.EventAppend(ctx, "x1", frames); err != nil {
			t.Fatal(err)
		}
		if err := s.EventAppend(ctx, "x1", short); err != nil {
			t.Fatal(err)
		}
		oldText, _ := json.Marshal(old)
		if _, err := s.exec(ctx, "INSERT INTO execution_events (execution_id, seq_from, seq_to, frames) VALUES ('x1', 43, 44, $1)", string(oldText)); err != nil {
			t.Fatal(err)
		}
		all := append(append(append([]domain.Event(nil), frames...), short...), old...)

		t.Run("Stored", func(t *testing.T) {
			rows, err := s.r.QueryContext(ctx, "SELECT seq_from, frames, packed FROM execution_events WHERE execution_id = 'x1' ORDER BY seq_from")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var from int
				var text string
				var packed []byte
				if err := rows.Scan(&from, &text, &packed); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%d text=%t packed=%t", from, text != "", packed != nil))
				if packed != nil && len(packed) > 400 {
					t.Errorf("batch %d: %d bytes compressed", from, len(packed))
				}
			}
			want := []string{"1 text=false packed=true", "42 text=true packed=false", "43 text=true packed=false"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("rows (-want +got):\n%s", diff)
			}
		})

		for _, after := range []int{0, 1, 20, 40, 41, 42, 43, 44} {
			t.Run(fmt.Sprintf("After%d", after), func(t *testing.T) {
				got, err := s.EventList(ctx, "x1", after)
				if err != nil {
					t.Fatal(err)
				}
				var want []domain.Event
				for _, ev := range all {
					if ev.Seq > after {
						want = append(want, ev)
					}
				}
				if diff := cmp.Diff(frameText(want), frameText(got)); diff != "" {
					t.Fatalf("frames after %d (-want +got):\n%s", after, diff)
				}
			})
		}

		t.Run("Corrupt", func(t *testing.T) {
			if _, err := s.exec(ctx, "INSERT INTO execution_events (execution_id, seq_from, seq_to, frames, packed) VALUES ('x2', 1, 2, '', $1)",
				[]byte("not zstd")); err != nil {
				t.Fatal(err)
			}
			if _, err := s.EventList(ctx, "x2", 0); err == nil || !strings.Contains(err.Error(), "x2") {
				t.Fatalf("corrupt batch: %v", err)
			}
		})
	})
}

// frameText renders frames with their data's exact bytes.
func frameText(evs []domain.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = fmt.Sprintf("%d %s %s", ev.Seq, ev.Event, ev.Data)
	}
	return out
}

// TestFramesShareOutput: a compressed batch keeps neither the frame numbers (when they run on
// without a gap) nor the execution's output at the head of its done frame, and reads back
// byte for byte; a done frame whose output differs from the execution's (escaped otherwise),
// and a batch with a gap in its numbers, keep them.
func TestFramesShareOutput(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ws := mustWorkspace(t, s, "frames")
		output := `{"content":"final answer <42>"}`
		if _, err := s.exec(ctx, `INSERT INTO executions (id, workspace_id, agent_id, root_id, source, status, trace_id, created_at, updated_at, output)
			VALUES ('x3', $1, 'ag1', 'x3', 'api', 'completed', 'tr3', 1, 1, $2)`, ws, output); err != nil {
			t.Fatal(err)
		}
		run := func(from int, done string) []domain.Event {
			var evs []domain.Event
			for i := range 30 {
				evs = append(evs, domain.Event{Seq: from + i, Event: "content", Data: json.RawMessage(fmt.Sprintf(`{"content":"word %d "}`, i))})
			}
			return append(evs, domain.Event{Seq: from + 30, Event: "done", Data: json.RawMessage(done)})
		}
		shared := run(1, `{"output":`+output+`,"time":0.5}`)
		alone := run(100, `{"output":`+output+`}`)
		escaped := run(200, `{"output":{"content":"final answer \u003c42\u003e"},"time":0.5}`)
		gap := run(300, `{"output":`+output+`}`)
		gap[5].Seq, gap[30].Seq = 350, 360
		for _, b := range [][]domain.Event{shared, alone, escaped, gap} {
			if err := s.EventAppendFinal(ctx, "x3", b, json.RawMessage(output)); err != nil {
				t.Fatal(err)
			}
		}

		t.Run("Stored", func(t *testing.T) {
			rows, err := s.r.QueryContext(ctx, "SELECT seq_from, packed FROM execution_events WHERE execution_id = 'x3' ORDER BY seq_from")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var from int
				var packed []byte
				if err := rows.Scan(&from, &packed); err != nil {
					t.Fatal(err)
				}
				text, err := frameDecoder.DecodeAll(packed, nil)
				if err != nil {
					t.Fatal(err)
				}
				hasSeq, hasOutput := strings.Contains(string(text), `"seq":`), strings.Contains(string(text), "final answer")
				if want := from == 300; hasSeq != want {
					t.Errorf("batch %d: frame numbers stored %t, want %t", from, hasSeq, want)
				}
				if want := from == 200; hasOutput != want {
					t.Errorf("batch %d: output stored %t, want %t:\n%s", from, hasOutput, want, text)
				}
			}
		})
		t.Run("Read", func(t *testing.T) {
			got, err := s.EventList(ctx, "x3", 0)
			if err != nil {
				t.Fatal(err)
			}
			want := append(append(append(append([]domain.Event(nil), shared...), alone...), escaped...), gap...)
			if diff := cmp.Diff(frameText(want), frameText(got)); diff != "" {
				t.Fatalf("frames (-want +got):\n%s", diff)
			}
		})
		t.Run("OutputGone", func(t *testing.T) {
			if _, err := s.exec(ctx, "UPDATE executions SET output = NULL WHERE id = 'x3'"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.EventList(ctx, "x3", 0); err == nil || !strings.Contains(err.Error(), "x3") {
				t.Fatalf("frames without their output: %v", err)
			}
		})
	})
}
