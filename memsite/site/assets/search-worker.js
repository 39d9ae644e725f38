// memsite's search worker: answers Material's search box from the sharded index that
// memsite/site/search_index.py writes under search/memsite/, loading only the shards of the
// typed terms and the document blocks of the results shown (issue 12). It speaks Material's
// worker protocol (SETUP 0, READY 1, QUERY 2, RESULT 3), so Material's search UI stays.
// It runs as a Web Worker over http(s) and in the iframe-worker shim from file://, where
// importScripts returns a promise: every call is awaited.
"use strict";

const SETUP = 0, READY = 1, QUERY = 2, RESULT = 3;
const LIMIT = 30;
const PREFIX_FACTOR = 0.6;
const GROUP_FACTOR = 0.5;
const NAMED = 0.75;
// Function words, and the question words and pronouns of a question asked in words ("why did
// we drop mongo"): matched, they ranked "Where were we?" and any entry saying "we" (39.6).
const STOP = new Set(("a an and are as at be but by for from has have in is it its of on or " +
  "that the this to was were will with " +
  "why what when where who whom how which did do does done we our us you your me my " +
  "should could would can about").split(" "));
const WORD = /[\p{L}\p{N}]+/gu;

const scriptUrl = (typeof document !== "undefined" && document.querySelector("script[src]"))
  ? document.querySelector("script[src]").src : self.location.href;
const BASE = new URL("../../search/memsite/", scriptUrl.split("?")[0]).href;

let meta = null;
const keys = new Set();
const holders = new Map();  // a superseded entry's document -> the document that now holds
const groupOf = new Map();  // a word -> its group's term in the index (search_index.py)
const shards = new Map();
const blocks = new Map();
let latest = 0;  // the newest query asked
let shown = 0;  // the newest query answered: an older answer arriving later is dropped

self.__msKeys = (value) => {
  meta = value;
  value.keys.forEach((k) => keys.add(k));
  (value.successors || []).forEach(([old, holder]) => holders.set(old, holder));
  Object.entries(value.groups || {}).forEach(([term, members]) =>
    members.forEach((word) => groupOf.set(word, term)));
};
self.__msShard = (key, terms) => { shards.set(key, terms); };
self.__msDocs = (number, rows) => { blocks.set(number, rows); };

function hex(text) {
  return Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("");
}

// Over http(s) the files are fetched in parallel and their JSON read without running them;
// from file:// (the shim, where fetch cannot read files) each is run as a script in turn.
const SHIM = typeof document !== "undefined";
const CALL = /^self\.(__ms\w+)\(("[^"]*"|\d+),/;

async function load(paths) {
  if (SHIM) {
    for (const path of paths) await importScripts(BASE + path);
    return;
  }
  await Promise.all(paths.map(async (path) => {
    const source = await (await fetch(BASE + path)).text();
    const [head, name, key] = source.match(CALL);
    if (name === "__msShard" || name === "__msDocs") {
      self[name](JSON.parse(key), JSON.parse(source.slice(head.length, -1)));
    }
  }));
}

let keysLoaded = null;
function ensureMeta() {
  if (keysLoaded === null) {
    keysLoaded = SHIM ? load(["keys.js"]) : fetch(BASE + "keys.js")
      .then((response) => response.text())
      .then((source) => self.__msKeys(JSON.parse(source.slice(source.indexOf("(") + 1, -1))));
  }
  return keysLoaded;
}

function terms(query) {
  const all = (query.toLowerCase().match(WORD) || []).filter((t) => t.length > 1);
  const kept = all.filter((t) => !STOP.has(t));
  return [...new Set(kept.length ? kept : all)];
}

// A term's shard: its first three characters (a shorter term is its own shard). A query word
// of two characters matches only that word: as a prefix it would match most of the index.
function shardOf(term) {
  return [...term].slice(0, 3).join("");
}

// A query word's postings: its own (exact, or every longer word it starts) with their factor
function postingsOf(term) {
  const shard = shards.get(shardOf(term)) || {};
  if ([...term].length < 3) return term in shard ? [[term, shard[term], 1]] : [];
  return Object.keys(shard).filter((t) => t.startsWith(term))
    .map((t) => [t, shard[t], t === term ? 1 : PREFIX_FACTOR]);
}

function shardsOf(term) {
  return groupOf.has(term) ? [shardOf(term), shardOf(groupOf.get(term))] : [shardOf(term)];
}

// Adds one query word's postings to the totals: each document counted once for the word,
// at its best weight, and as a title word when one of its postings is (the index gives each
// weight doubled, plus one for a word of the title). ``stamp`` is the word's own.
function add(postings, totals, stamp, docs) {
  const { score, matched, titled, seen, own, ownTitled, touched } = totals;
  for (const [, posted, factor] of postings) {
    let number = 0;
    for (let i = 0; i < posted.length; i += 2) {
      number += posted[i];
      const weight = (posted[i + 1] >> 1) * factor;
      const inTitle = posted[i + 1] & 1;
      if (seen[number] !== stamp) {
        seen[number] = stamp;
        own[number] = weight;
        ownTitled[number] = inTitle;
        if (!matched[number]) touched.push(number);
        matched[number] += 1;
        score[number] += weight;
        titled[number] += inTitle;
        docs.push(number);
        continue;
      }
      if (own[number] < weight) {
        score[number] += weight - own[number];
        own[number] = weight;
      }
      if (inTitle && !ownTitled[number]) {
        ownTitled[number] = 1;
        titled[number] += 1;
      }
    }
  }
}

// A word of a group (LEAVING in search_index.py) that, read as written, shares no document
// with any other word of the query names something else there ("drop" in "drop mongo": a
// make target that drops a database): it is read as its group too, at a lower weight, so
// that the entry holding the topic and a word for leaving it ("Move the session store from
// MongoDB to Postgres") holds every word of the question. A word that meets the others, or
// a query of one word, stays as written. (No other word holds its documents, so their
// stamps and weights are still its own.)
function relax(wanted, totals, docsOf) {
  if (wanted.length < 2) return;
  const apart = wanted.map((term, index) => groupOf.has(term)
    && !docsOf[index].some((number) => totals.matched[number] > 1));
  wanted.forEach((term, index) => {
    const group = groupOf.get(term);
    const posted = apart[index] && (shards.get(shardOf(group)) || {})[group];
    if (posted) add([[group, posted, GROUP_FACTOR]], totals, index + 1, docsOf[index]);
  });
}

async function search(query, mine) {
  await ensureMeta();
  const wanted = terms(query);
  if (!wanted.length) return { items: [] };
  const missing = new Set(wanted.flatMap(shardsOf).filter((k) => keys.has(k) && !shards.has(k)));
  await load([...missing].map((key) => `t/${hex(key)}.js`));
  if (mine < shown) return null;
  const count = meta.count;
  const totals = {
    score: new Float64Array(count), matched: new Uint8Array(count), titled: new Uint8Array(count),
    seen: new Int32Array(count), own: new Float64Array(count), ownTitled: new Uint8Array(count),
    touched: [],
  };
  const best = new Map();  // how often each expansion of the last term occurs: suggestions
  const docsOf = wanted.map((term, index) => {
    const postings = postingsOf(term);
    if (index === wanted.length - 1) {
      postings.forEach(([expansion, posted]) => best.set(expansion, posted.length));
    }
    const docs = [];
    add(postings, totals, index + 1, docs);
    return docs;
  });
  relax(wanted, totals, docsOf);
  const { score, matched, titled, touched } = totals;
  // The documents that hold the most of the query's words first, then those holding fewer
  // (a question with one word no entry shares still lists the entries holding the rest);
  // among equals, those whose title names the question (NAMED of its words, as memsite
  // search's history.py does), then the best scores. Only the best LIMIT are sorted.
  const least = NAMED * wanted.length;
  const rank = (n) => matched[n] * 1e7 + (titled[n] >= least ? 1e6 : 0) + score[n];
  const ranks = Float64Array.from(touched, rank);
  const floor = touched.length > LIMIT ? ranks.slice().sort()[touched.length - LIMIT] : -1;
  const candidates = touched.filter((_, i) => ranks[i] >= floor);
  candidates.sort((a, b) => rank(b) - rank(a));
  const top = withHolders(candidates, score).slice(0, LIMIT);
  const needed = [...new Set(top.map((n) => Math.floor(n / meta.block)))];
  await load(needed.filter((block) => !blocks.has(block)).map((block) => `d/${block}.js`));
  if (mine < shown) return null;
  const mark = new RegExp(`(^|[^\\p{L}\\p{N}])((?:${wanted.map(escape).join("|")})[\\p{L}\\p{N}]*)`, "giu");
  const items = top.map((number) => {
    const [location, title, page, text] = blocks.get(Math.floor(number / meta.block))[number % meta.block];
    const found = {};
    for (const t of wanted) found[t] = matchesDoc(t, title + " " + text);
    const item = { location, title: highlight(title, mark), text: highlight(text, mark),
      score: score[number], terms: found };
    // Material shows the item without a teaser when it is alone in its group, and links a
    // group's page item to the top of the page: a header item with the page's title and the
    // entry's own location keeps the teaser and lands every link on the entry (issue 12).
    if (!location.includes("#")) return [item];
    return [item, { location, title: page || title, text: "", score: score[number], terms: found }];
  });
  const suggest = [...best].sort((a, b) => b[1] - a[1]).slice(0, 1).map(([t]) => t);
  return { items, suggest };
}

// The entry that now holds goes right before each superseded one, moved up when it ranked
// lower and added when the query missed it, as memsite search does (issue 25): a reader
// acts on the first decision shown, so it is the one that holds.
function withHolders(ranked, score) {
  const out = [];
  const placed = new Set();
  for (const number of ranked) {
    if (placed.has(number)) continue;
    const holder = holders.get(number);
    if (holder !== undefined && !placed.has(holder)) {
      out.push(holder);
      placed.add(holder);
      if (score[holder] < score[number]) score[holder] = score[number];
    }
    out.push(number);
    placed.add(number);
  }
  return out;
}

function escape(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function matchesDoc(term, text) {
  return text.toLowerCase().includes(term);
}

// Marks query terms in an HTML text, leaving tags and entities whole.
function highlight(text, mark) {
  return text.split(/(<[^>]*>|&#?\w+;)/)
    .map((part, i) => (i % 2 ? part : part.replace(mark, "$1<mark>$2</mark>")))
    .join("");
}

if (!SHIM) ensureMeta();  // while the page loads

addEventListener("message", async (event) => {
  const message = event.data;
  if (message.type === SETUP) {
    postMessage({ type: READY });
    return;
  }
  if (message.type !== QUERY) return;
  const mine = ++latest;
  let data;
  try {
    data = await search(message.data, mine);
  } catch (err) {
    console.warn("memsite search failed:", err);
    data = { items: [] };
  }
  if (data === null || mine < shown) return;
  shown = mine;
  postMessage({ type: RESULT, data });
});
