// tlogcheck: an independent checker of reprosign's transparency log, built
// on Go's golang.org/x/mod/sumdb/tlog and note (Debian's
// golang-golang-x-mod-dev), offline, in GOPATH mode.
//
//	tlogcheck verify LOGDIR VKEY            the checkpoint's signature; every
//	    tile recomputed from the entries and compared byte for byte; the root;
//	    and the tree read again through tlog.TileHashReader
//	tlogcheck proof PROOF ENTRY VKEY        a c2sp.org/tlog-proof@v1
//	tlogcheck consistency OLD NEW VKEY      reprosign log consistency's output
//	    on stdin, between two signed checkpoints
//	tlogcheck make DIR N                    a log of N entries made by Go alone:
//	    DIR/log (tiles, bundles, checkpoint), DIR/vkey, proofs and entries
package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const height = 8

// tilePath is the c2sp.org/tlog-tiles path: Go's sumdb path without the
// height element ("tile/8/0/001" is "tile/0/001" there).
func tilePath(t tlog.Tile) string {
	return "tile/" + strings.SplitN(t.Path(), "/", 3)[2]
}

func bundlePath(n int64, w int) string {
	t := tlog.Tile{H: height, L: 0, N: n, W: w}
	return "tile/entries/" + strings.SplitN(tilePath(t), "/", 3)[2]
}

type checkpoint struct {
	origin string
	tree   tlog.Tree
	text   string
}

func openCheckpoint(msg []byte, vkey string) (checkpoint, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return checkpoint{}, err
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return checkpoint{}, err
	}
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) < 4 || lines[0] != v.Name() {
		return checkpoint{}, errors.New("checkpoint: origin is not the key's name")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 {
		return checkpoint{}, errors.New("checkpoint: bad size")
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return checkpoint{}, errors.New("checkpoint: bad root")
	}
	var h tlog.Hash
	copy(h[:], root)
	return checkpoint{lines[0], tlog.Tree{N: size, Hash: h}, n.Text}, nil
}

func readKey(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		fail(err)
	}
	return strings.TrimSpace(string(b))
}

// memHashes holds every stored hash, as tlog.StoredHashes makes them.
type memHashes []tlog.Hash

func (m *memHashes) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		if x >= int64(len(*m)) {
			return nil, fmt.Errorf("hash %d not stored", x)
		}
		out[i] = (*m)[x]
	}
	return out, nil
}

// fileTiles reads our tiles for TileHashReader.
type fileTiles struct{ dir string }

func (f fileTiles) Height() int { return height }
func (f fileTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		b, err := os.ReadFile(filepath.Join(f.dir, tilePath(t)))
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}
func (f fileTiles) SaveTiles([]tlog.Tile, [][]byte) {}

// ourTiles lists the tiles a log of size n keeps: the full ones and the
// last partial one of each level.
func ourTiles(n int64) []tlog.Tile {
	var tiles []tlog.Tile
	for level := 0; n>>(height*level) > 0; level++ {
		count := n >> (height * level)
		for i := int64(0); i < count>>height; i++ {
			tiles = append(tiles, tlog.Tile{H: height, L: level, N: i, W: 1 << height})
		}
		if w := int(count & (1<<height - 1)); w > 0 {
			tiles = append(tiles, tlog.Tile{H: height, L: level, N: count >> height, W: w})
		}
	}
	return tiles
}

func splitBundle(b []byte, w int) ([][]byte, error) {
	var out [][]byte
	for i := 0; i < w; i++ {
		if len(b) < 2 || len(b) < 2+int(b[0])<<8|int(b[1]) {
			return nil, fmt.Errorf("bundle ends before entry %d", i)
		}
		n := int(b[0])<<8 | int(b[1])
		out = append(out, b[2:2+n])
		b = b[2+n:]
	}
	if len(b) != 0 {
		return nil, errors.New("bytes after the bundle's entries")
	}
	return out, nil
}

func readCheckpoint(path, vkey string) checkpoint {
	msg, err := os.ReadFile(path)
	if err != nil {
		fail(err)
	}
	cp, err := openCheckpoint(msg, vkey)
	if err != nil {
		fail(fmt.Errorf("%s: %v", path, err))
	}
	return cp
}

// rootOf is the hash of a full tile's 256 hashes: the node one tile level up.
func rootOf(h []tlog.Hash) tlog.Hash {
	for len(h) > 1 {
		next := make([]tlog.Hash, len(h)/2)
		for i := range next {
			next[i] = tlog.NodeHash(h[2*i], h[2*i+1])
		}
		h = next
	}
	return h[0]
}

func hashesOf(data []byte) []tlog.Hash {
	h := make([]tlog.Hash, len(data)/tlog.HashSize)
	for i := range h {
		copy(h[i][:], data[i*tlog.HashSize:])
	}
	return h
}

func verify(dir, vkey string) {
	cp := readCheckpoint(filepath.Join(dir, "checkpoint"), vkey)
	n := cp.tree.N
	var hashes memHashes
	for b := int64(0); b*256 < n; b++ {
		w := int(n - b*256)
		if w > 256 {
			w = 256
		}
		data, err := os.ReadFile(filepath.Join(dir, bundlePath(b, w)))
		if err != nil {
			fail(err)
		}
		entries, err := splitBundle(data, w)
		if err != nil {
			fail(fmt.Errorf("%s: %v", bundlePath(b, w), err))
		}
		for i, e := range entries {
			add, err := tlog.StoredHashes(b*256+int64(i), e, &hashes)
			if err != nil {
				fail(err)
			}
			hashes = append(hashes, add...)
		}
	}
	root, err := tlog.TreeHash(n, &hashes)
	if n == 0 {
		// RFC 6962 hashes the empty tree as SHA-256 of nothing, and so
		// does tlog-checkpoint; Go's TreeHash returns the zero hash there.
		root = tlog.Hash(sha256.Sum256(nil))
	}
	if err != nil || root != cp.tree.Hash {
		fail(fmt.Errorf("the entries' root %v is not the checkpoint's %v (%v)", root, cp.tree.Hash, err))
	}
	// Every tile, recomputed from the entries, byte for byte; and every
	// full tile's root where its parent tile has it.
	files := map[string][]byte{}
	for _, t := range ourTiles(n) {
		want, err := tlog.ReadTileData(t, &hashes)
		if err != nil {
			fail(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, tilePath(t)))
		if err != nil {
			fail(err)
		}
		if !bytes.Equal(got, want) {
			fail(fmt.Errorf("%s does not match the entries", tilePath(t)))
		}
		files[tilePath(t)] = got
	}
	for _, t := range ourTiles(n) {
		if t.W != 256 {
			continue
		}
		count := n >> (height * (t.L + 1))
		parent := tlog.Tile{H: height, L: t.L + 1, N: t.N >> height, W: 256}
		if w := count - parent.N<<height; w < 256 {
			parent.W = int(w)
		}
		p := files[tilePath(parent)]
		k := int(t.N & 255)
		if len(p) < (k+1)*tlog.HashSize || rootOf(hashesOf(files[tilePath(t)])) != hashesOf(p)[k] {
			fail(fmt.Errorf("%s: its hash is not in %s", tilePath(t), tilePath(parent)))
		}
	}
	// And the tree read again through Go's own tile reader.
	if n > 0 {
		tr := tlog.TileHashReader(cp.tree, fileTiles{dir})
		th, err := tlog.TreeHash(n, tr)
		if err != nil || th != cp.tree.Hash {
			fail(fmt.Errorf("TileHashReader: %v", err))
		}
		for _, k := range []int64{0, n / 2, n - 1} {
			p, err := tlog.ProveRecord(n, k, tr)
			if err != nil || tlog.CheckRecord(p, n, cp.tree.Hash, k, hashes[tlog.StoredHashIndex(0, k)]) != nil {
				fail(fmt.Errorf("record %d through TileHashReader: %v", k, err))
			}
		}
	}
	fmt.Printf("%s: %d entries, %d tiles, all checked\n", dir, n, len(files))
}

func parseProof(text []byte) (int64, tlog.RecordProof, []byte) {
	parts := bytes.SplitN(text, []byte("\n\n"), 2)
	if len(parts) != 2 {
		fail(errors.New("proof: no blank line"))
	}
	lines := strings.Split(string(parts[0]), "\n")
	if lines[0] != "c2sp.org/tlog-proof@v1" {
		fail(errors.New("proof: bad header"))
	}
	lines = lines[1:]
	if len(lines) > 0 && strings.HasPrefix(lines[0], "extra ") {
		lines = lines[1:]
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "index ") {
		fail(errors.New("proof: no index"))
	}
	index, err := strconv.ParseInt(lines[0][6:], 10, 64)
	if err != nil {
		fail(err)
	}
	var p tlog.RecordProof
	for _, l := range lines[1:] {
		b, err := base64.StdEncoding.DecodeString(l)
		if err != nil || len(b) != tlog.HashSize {
			fail(errors.New("proof: bad hash"))
		}
		var h tlog.Hash
		copy(h[:], b)
		p = append(p, h)
	}
	return index, p, parts[1]
}

func checkProof(proofPath, entryPath, vkey string) {
	text, err := os.ReadFile(proofPath)
	if err != nil {
		fail(err)
	}
	entry, err := os.ReadFile(entryPath)
	if err != nil {
		fail(err)
	}
	index, p, msg := parseProof(text)
	cp, err := openCheckpoint(msg, vkey)
	if err != nil {
		fail(err)
	}
	if err := tlog.CheckRecord(p, cp.tree.N, cp.tree.Hash, index, tlog.RecordHash(entry)); err != nil {
		fail(err)
	}
	fmt.Printf("%s: entry %d of %d, proof checked\n", entryPath, index, cp.tree.N)
}

func hashLine(line string) (int64, tlog.Hash) {
	f := strings.Split(line, " ")
	var h tlog.Hash
	if len(f) != 3 {
		fail(errors.New("consistency: bad size line"))
	}
	n, err1 := strconv.ParseInt(f[1], 10, 64)
	b, err2 := base64.StdEncoding.DecodeString(f[2])
	if err1 != nil || err2 != nil || len(b) != tlog.HashSize {
		fail(errors.New("consistency: bad size line"))
	}
	copy(h[:], b)
	return n, h
}

func checkConsistency(oldPath, newPath, vkey string) {
	old, cur := readCheckpoint(oldPath, vkey), readCheckpoint(newPath, vkey)
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	lines := strings.Split(strings.TrimRight(string(in), "\n"), "\n")
	m, mh := hashLine(lines[0])
	n, nh := hashLine(lines[1])
	if m != old.tree.N || mh != old.tree.Hash || n != cur.tree.N || nh != cur.tree.Hash {
		fail(errors.New("consistency: sizes or roots are not the checkpoints'"))
	}
	var p tlog.TreeProof
	for _, l := range lines[2:] {
		b, err := base64.StdEncoding.DecodeString(l)
		if err != nil || len(b) != tlog.HashSize {
			fail(errors.New("consistency: bad hash"))
		}
		var h tlog.Hash
		copy(h[:], b)
		p = append(p, h)
	}
	if err := tlog.CheckTree(p, n, nh, m, mh); err != nil {
		fail(err)
	}
	fmt.Printf("tree %d extends tree %d: proof checked\n", n, m)
}

func write(path string, data []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		fail(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		fail(err)
	}
}

func signCheckpoint(s note.Signer, n int64, h tlog.Hash) []byte {
	text := fmt.Sprintf("%s\n%d\n%s\n", s.Name(), n, base64.StdEncoding.EncodeToString(h[:]))
	msg, err := note.Sign(&note.Note{Text: text}, s)
	if err != nil {
		fail(err)
	}
	return msg
}

// makeLog writes a log of n entries with Go alone, for reprosign to check.
func makeLog(dir string, n int64) {
	skey, vkey, err := note.GenerateKey(rand.Reader, "go.example/tlog")
	if err != nil {
		fail(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		fail(err)
	}
	write(filepath.Join(dir, "vkey"), []byte(vkey+"\n"))
	var hashes memHashes
	var bundle []byte
	entry := func(i int64) []byte { return []byte(fmt.Sprintf(`{"go":%d,"pad":"%040d"}`, i, i)) }
	for i := int64(0); i < n; i++ {
		e := entry(i)
		add, err := tlog.StoredHashes(i, e, &hashes)
		if err != nil {
			fail(err)
		}
		hashes = append(hashes, add...)
		bundle = append(bundle, byte(len(e)>>8), byte(len(e)))
		bundle = append(bundle, e...)
		if (i+1)%256 == 0 || i == n-1 {
			write(filepath.Join(dir, "log", bundlePath(i/256, int(i%256)+1)), bundle)
			bundle = nil
		}
	}
	for _, t := range ourTiles(n) {
		data, err := tlog.ReadTileData(t, &hashes)
		if err != nil {
			fail(err)
		}
		write(filepath.Join(dir, "log", tilePath(t)), data)
	}
	root, err := tlog.TreeHash(n, &hashes)
	if err != nil {
		fail(err)
	}
	msg := signCheckpoint(s, n, root)
	write(filepath.Join(dir, "log", "checkpoint"), msg)
	if old := n / 2; old > 0 {
		oldRoot, _ := tlog.TreeHash(old, &hashes)
		write(filepath.Join(dir, "old-checkpoint"), signCheckpoint(s, old, oldRoot))
	}
	for _, k := range []int64{0, n / 2, n - 1} {
		p, err := tlog.ProveRecord(n, k, &hashes)
		if err != nil {
			fail(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "c2sp.org/tlog-proof@v1\nindex %d\n", k)
		for _, h := range p {
			fmt.Fprintf(&b, "%s\n", base64.StdEncoding.EncodeToString(h[:]))
		}
		b.WriteString("\n")
		b.Write(msg)
		write(filepath.Join(dir, fmt.Sprintf("proof-%d", k)), []byte(b.String()))
		write(filepath.Join(dir, fmt.Sprintf("entry-%d", k)), entry(k))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tlogcheck:", err)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: tlogcheck verify|proof|consistency|make ..."))
	}
	switch os.Args[1] {
	case "verify":
		verify(os.Args[2], readKey(os.Args[3]))
	case "proof":
		checkProof(os.Args[2], os.Args[3], readKey(os.Args[4]))
	case "consistency":
		checkConsistency(os.Args[2], os.Args[3], readKey(os.Args[4]))
	case "make":
		n, err := strconv.ParseInt(os.Args[3], 10, 64)
		if err != nil || n < 1 {
			fail(errors.New("make: N must be a number > 0"))
		}
		makeLog(os.Args[2], n)
	default:
		fail(errors.New("unknown command"))
	}
}
