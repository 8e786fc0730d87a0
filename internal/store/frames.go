package store

import (
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// packMin is the size under which a batch of frames is stored as text: a few short frames
// gain too little from compression to pay for it.
const packMin = 256

// The frames of a batch are JSON text, repetitive (`{"seq":…,"event":"content","data":…}`
// again and again), so they compress about 4:1. zstd at its fastest level was chosen over
// compress/flate on a simple run's batch (2,346 bytes): 525 bytes in about 30 µs, read back in
// about 10 µs, against flate's 476 bytes in about 60 µs and 30 µs (BenchmarkRunBytes measures
// the bytes per run). Both are safe for concurrent use.
var (
	frameEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	frameDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(64<<20))
)

// packFrames returns what stores a batch's JSON text: the text itself when short or not
// worth compressing (packed nil), else "" and the compressed bytes.
func packFrames(text []byte) (frames string, packed []byte) {
	if len(text) < packMin {
		return string(text), nil
	}
	packed = frameEncoder.EncodeAll(text, make([]byte, 0, len(text)/3))
	if len(packed) >= len(text) {
		return string(text), nil
	}
	return "", packed
}

// unpackFrames returns a stored batch's JSON text, from either form packFrames writes.
func unpackFrames(frames string, packed []byte) ([]byte, error) {
	if packed == nil {
		return []byte(frames), nil
	}
	text, err := frameDecoder.DecodeAll(packed, nil)
	if err != nil {
		return nil, fmt.Errorf("decompress frames: %w", err)
	}
	return text, nil
}
