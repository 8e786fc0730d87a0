package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/klauspost/compress/zstd"
)

// packMin is the size under which a batch of frames is stored as text: a few short frames
// gain too little from compression to pay for it.
const packMin = 256

// The frames of a batch are JSON text, repetitive (`{"event":"content","data":…}` again and
// again), so they compress about 4:1. zstd at its fastest level was chosen over
// compress/flate on a simple run's batch (2,346 bytes): 525 bytes in about 30 µs, read back in
// about 10 µs, against flate's 476 bytes in about 60 µs and 30 µs (BenchmarkRunBytes measures
// the bytes per run). Both are safe for concurrent use.
var (
	frameEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	frameDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(64<<20))
)

// storedEvent is a frame as a compressed batch holds it. Two things a batch would otherwise
// hold twice are left out (on that simple run's batch, 522 compressed bytes become about
// 320): the frame number, when the batch's numbers run on from its seq_from without a gap
// (Seq 0: the next number); and the execution's output at the head of the terminal "done"
// frame's data (Output set: the data is `{"output":` + the execution's output + the rest).
type storedEvent struct {
	Seq    int             `json:"seq,omitempty"`
	Event  string          `json:"event"`
	Output bool            `json:"output,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// framesText writes a batch as a JSON array, every frame's data as is (already JSON:
// re-encoding would validate and copy each one again). A batch to be compressed leaves out
// what storedEvent says: the frame numbers when they run on, and output (the execution's,
// when known) at the head of a "done" frame's data.
func framesText(events []domain.Event, packed bool, output json.RawMessage) []byte {
	gapless := packed
	for i := 1; gapless && i < len(events); i++ {
		gapless = events[i].Seq == events[i-1].Seq+1
	}
	b := make([]byte, 0, 64*len(events))
	b = append(b, '[')
	for i, ev := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		if !gapless {
			b = append(b, `"seq":`...)
			b = strconv.AppendInt(b, int64(ev.Seq), 10)
			b = append(b, ',')
		}
		b = append(b, `"event":"`...)
		b = append(b, ev.Event...) // event names are fixed identifiers
		b = append(b, `",`...)
		data := ev.Data
		if len(data) == 0 {
			data = json.RawMessage("null")
		}
		if rest, ok := cutOutput(ev, output); packed && ok {
			b = append(b, `"output":true,`...)
			data = rest
		}
		b = append(b, `"data":`...)
		b = append(b, data...)
		b = append(b, '}')
	}
	return append(b, ']')
}

// outputHead is how a "done" frame's data starts: the execution's output follows.
const outputHead = `{"output":`

// cutOutput returns the data of a "done" frame without the execution's output at its head
// (`{"output":X,"time":1}` becomes `{"time":1}`, `{"output":X}` becomes `{}`); ok is false
// when the frame does not start with exactly that output.
func cutOutput(ev domain.Event, output json.RawMessage) (rest json.RawMessage, ok bool) {
	d := ev.Data
	n := len(outputHead) + len(output)
	if ev.Event != "done" || len(output) == 0 || len(d) <= n || !bytes.HasPrefix(d, []byte(outputHead)) || !bytes.Equal(d[len(outputHead):n], output) {
		return nil, false
	}
	switch d[n] {
	case '}':
		if n == len(d)-1 {
			return json.RawMessage("{}"), true
		}
	case ',':
		return append(json.RawMessage("{"), d[n+1:]...), true
	}
	return nil, false
}

// joinOutput undoes cutOutput.
func joinOutput(rest, output json.RawMessage) json.RawMessage {
	b := make(json.RawMessage, 0, len(outputHead)+len(output)+len(rest))
	b = append(append(b, outputHead...), output...)
	if string(rest) == "{}" {
		return append(b, '}')
	}
	return append(append(b, ','), rest[1:]...)
}

// packFrames returns what stores a batch: its JSON text when short or not worth compressing
// (packed nil), else "" and the compressed text of its storedEvents. output is the
// execution's, for a batch written as the run completes (else nil).
func packFrames(events []domain.Event, output json.RawMessage) (frames string, packed []byte) {
	text := framesText(events, false, nil)
	if len(text) < packMin {
		return string(text), nil
	}
	packed = frameEncoder.EncodeAll(framesText(events, true, output), make([]byte, 0, len(text)/3))
	if len(packed) >= len(text) {
		return string(text), nil
	}
	return "", packed
}

// unpackFrames returns the frames of a stored batch, from either form packFrames writes (and
// from compressed batches written before frame numbers and output were left out). output
// reads the execution's output, called only for a frame that left it out.
func unpackFrames(seqFrom int, frames string, packed []byte, output func() (json.RawMessage, error)) ([]domain.Event, error) {
	text := []byte(frames)
	if packed != nil {
		var err error
		if text, err = frameDecoder.DecodeAll(packed, nil); err != nil {
			return nil, fmt.Errorf("decompress frames: %w", err)
		}
	}
	var stored []storedEvent
	if err := json.Unmarshal(text, &stored); err != nil {
		return nil, fmt.Errorf("decode frames: %w", err)
	}
	out := make([]domain.Event, len(stored))
	for i, st := range stored {
		ev := domain.Event{Seq: st.Seq, Event: st.Event, Data: st.Data}
		if ev.Seq == 0 {
			ev.Seq = seqFrom + i
		}
		if st.Output {
			o, err := output()
			if err != nil {
				return nil, err
			}
			ev.Data = joinOutput(st.Data, o)
		}
		out[i] = ev
	}
	return out, nil
}

// executionOutput reads an execution's output, for frames that left it out.
func (s *Store) executionOutput(ctx context.Context, executionID string) (json.RawMessage, error) {
	var output sql.NullString
	err := s.r.QueryRowContext(ctx, "SELECT output FROM executions WHERE id = $1", executionID).Scan(&output)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !output.Valid {
		return nil, fmt.Errorf("the frames of execution %s hold its output, which is not stored", executionID)
	}
	if err != nil {
		return nil, fmt.Errorf("read the output of execution %s: %w", executionID, err)
	}
	return json.RawMessage(output.String), nil
}
