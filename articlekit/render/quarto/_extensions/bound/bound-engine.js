// bound-engine.js: Quarto's own `quarto render` and `quarto preview` of the
// article render the bound document, not the article's shortcodes.
//
// Quarto reads the file an author saves, index.qmd, and its reader turns
// each of several hundred shortcodes into a node that the value extension
// then resolves: most of a render's time. articlekit's pre-render
// (articlekit/render/quarto_hooks.py) has already bound the text it
// checked; it writes the bound document (every shortcode Quarto could run
// written as Quarto's escape, as the build's Quarto route renders it) and,
// beside this extension, .bound.json (hidden, so that a one-file preview,
// which renders again when a file of an extension changes, does not watch
// it): {"source": the article's path,
// "md5": the md5 of the text it bound, "bound": the bound document's path}.
//
// This engine claims that one file and hands Quarto the bound document
// instead of the text, only while the text Quarto read is the very text
// that was bound (its md5): otherwise, as for every other file, the text
// as it is, whose shortcodes the value extension resolves. A page is
// never made from another text's values.

const POINTER = new URL("../.bound.json", import.meta.url);

let quarto;

function pointer() {
  try {
    return JSON.parse(Deno.readTextFileSync(POINTER));
  } catch {
    return null;
  }
}

function sameFile(a, b) {
  try {
    return Deno.realPathSync(a) === Deno.realPathSync(b);
  } catch {
    return false;
  }
}

function boundFor(text, input) {
  const bound = pointer();
  if (bound === null || !sameFile(bound.source, input) || quarto.crypto.md5Hash(text) !== bound.md5) {
    return null;
  }
  try {
    return Deno.readTextFileSync(bound.bound);
  } catch {
    return null;
  }
}

const engine = {
  init: (api) => {
    quarto = api;
  },
  name: "articlekit-bound",
  defaultExt: ".qmd",
  defaultYaml: () => [],
  defaultContent: () => [],
  validExtensions: () => [".qmd"],
  claimsFile: (file, _ext) => {
    const bound = pointer();
    return bound !== null && sameFile(bound.source, file);
  },
  claimsLanguage: (_language) => false,
  canFreeze: false,
  generatesFigures: false,

  launch: (_context) => ({
    name: engine.name,
    canFreeze: false,
    markdownForFile: (file) => Promise.resolve(quarto.mappedString.fromFile(file)),
    // The target's markdown is the bound document already, where the text
    // is the one bound: Quarto maps the engine's output back onto the
    // target's lines by a diff it gives up on after 0.2 s (mappedDiff), a
    // fixed cost on every save between the text and its bound document,
    // none between a document and itself. The metadata stays the text's.
    target: (file, _quiet, markdown) => {
      const text = markdown ?? quarto.mappedString.fromFile(file);
      const bound = boundFor(text.value, file);
      return Promise.resolve({
        source: file,
        input: file,
        markdown: bound === null ? text : quarto.mappedString.fromString(bound, file),
        metadata: quarto.markdownRegex.extractYaml(text.value),
        data: { bound: bound !== null },
      });
    },
    partitionedMarkdown: (file) => Promise.resolve(quarto.markdownRegex.partition(Deno.readTextFileSync(file))),
    execute: (options) => {
      // Checked again, against the text as it is now: a save or a new
      // binding between target() and here gives the text it has, bound
      // only if it is the text bound.
      const target = options.target;
      let text = target.markdown.value;
      if (target.data?.bound) {
        try {
          text = Deno.readTextFileSync(target.input);
        } catch {
          text = "";
        }
      }
      return Promise.resolve({
        engine: engine.name,
        markdown: boundFor(text, target.input) ?? text,
        supporting: [],
        filters: [],
      });
    },
    dependencies: (_options) => Promise.resolve({ includes: {} }),
    postprocess: (_options) => Promise.resolve(),
  }),
};

export default engine;
