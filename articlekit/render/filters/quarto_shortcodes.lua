--[[
quarto_shortcodes.lua: run Quarto shortcode extensions under plain Pandoc.

Where Quarto is not installed, `python -m articlekit render` runs Pandoc with
this filter so the packaged shortcode file (articlekit/render/quarto/_extensions/value/
value.lua) runs unchanged. It mirrors what Quarto >= 1.5 does (quarto-cli,
src/resources/filters/customnodes/shortcodes.lua, quarto-pre/
shortcodes-handlers.lua, pandoc/datadir/lpegshortcode.lua):

- No shortcode is parsed here: articlekit/article/shortcodes.py, the one
  parser of the grammar, has taken each apart before Pandoc reads the
  markdown (to_quarto_markdown). A prose shortcode is the span Quarto's own
  pre-processing writes: class "quarto-shortcode__", holding one empty
  "quarto-shortcode__-param" span per argument (data-value, data-key,
  data-raw), read here the way Quarto's Shortcode AST node reads it. One in
  code or raw HTML is a marker, @@articlekit-shortcode:HEX@@, holding its
  name and its parameters as Quarto's code parser hands them (quotes kept).
- Shortcode files are listed in the metadata field `shortcodes` (Quarto's
  own document option); each is loaded with loadfile in its own
  environment, and the functions of the table it returns (or, failing
  that, the globals it defines) become handlers by name.
- First pass (blocks): a Para or Plain holding only a shortcode calls the
  handler with context "block"; the markers in CodeBlock and RawBlock text
  are called with context "text".
- Second pass (inlines): other shortcode spans get context "inline"; the
  markers in Code and RawInline text get "text".
- Handlers are called as handle(args, kwargs, meta, raw_args, context):
  args a pandoc.List of positional values; kwargs a table whose missing
  keys read as empty Inlines; meta a table that reads document metadata on
  access (dotted names walk into maps); raw_args the values as written.
  In prose, values come as pandoc Inlines (what Quarto's documentation
  promises; Quarto itself may pass strings, so handlers stringify). In
  "text" context values are the raw tokens: quotes kept.
- Results are coerced as Quarto's shortcodeResultAsInlines / AsBlocks do;
  in "text" context the result is stringified into the text.
- The built-in `meta` shortcode prints document metadata, so the article can
  say which renderer built it: {{< meta renderer >}}.
- `{{{< ... >}}}` prints as `{{< ... >}}` (in code, Python has already
  written it so); code blocks with shortcodes="false" are left alone.
]]

local handlers = {}
local doc_meta = nil

-- document metadata, as a shortcode's `meta` argument sees it ----------------

local function read_meta(name)
  local node = doc_meta[name]
  if node ~= nil then
    return node
  end
  node = doc_meta
  for part in name:gmatch("[^.]+") do
    if type(node) ~= "table" and pandoc.utils.type(node) ~= "Meta" then
      return nil
    end
    node = node[part]
    if node == nil then
      return nil
    end
  end
  return node
end

-- read on access, so one table serves every call of the current document
local meta_proxy = setmetatable({}, { __index = function(_, name) return read_meta(name) end })

-- loading extension shortcode files, as initShortcodeHandlers does ---------

local function load_shortcode_file(file)
  local env = setmetatable({ PANDOC_SCRIPT_FILE = file }, { __index = _G })
  local chunk, err = loadfile(file, "bt", env)
  if chunk == nil then
    error("cannot load shortcode file " .. file .. ": " .. tostring(err))
  end
  local result = chunk()
  local source = result or env
  for name, fn in pairs(source) do
    if type(fn) == "function" then
      handlers[name] = { file = file, handle = fn }
    end
  end
end

-- the built-in meta shortcode (handleMeta, simplified) ----------------------

local function handle_meta(args, kwargs, meta, raw_args, context)
  local name = pandoc.utils.stringify(args[1] or "")
  name = name:gsub('^"(.*)"$', "%1"):gsub("^'(.*)'$", "%1")
  local value = read_meta(name)
  if value == nil then
    io.stderr:write("WARNING: unknown meta key " .. name .. " in a meta shortcode\n")
    return pandoc.Inlines({ pandoc.Strong({ pandoc.Str("?meta:" .. name) }) })
  end
  if context == "text" then
    return pandoc.utils.stringify(value)
  end
  local kind = pandoc.utils.type(value)
  if kind == "Inlines" then
    return value
  elseif kind == "Blocks" then
    return context == "block" and value or pandoc.utils.blocks_to_inlines(value)
  end
  return pandoc.Inlines({ pandoc.Str(pandoc.utils.stringify(value)) })
end

-- calling a handler, as callShortcodeHandler does ---------------------------

local function call_handler(name, params, context)
  local handler = handlers[name]
  if handler == nil then
    return nil
  end
  local args = pandoc.List()
  local kwargs = setmetatable({}, { __index = function() return pandoc.Inlines({}) end })
  local raw_args = {}
  for _, p in ipairs(params) do
    local v = p.value
    if context ~= "text" then
      v = pandoc.Inlines(v)
    end
    if p.name then
      kwargs[p.name] = v
    else
      args:insert(v)
    end
    table.insert(raw_args, p.value)
  end
  return handler.handle(args, kwargs, meta_proxy, raw_args, context)
end

local function is_array(t)
  return type(t) == "table" and #t > 0
end

local function is_inline(x)
  return pandoc.utils.type(x) == "Inline"
end

local function is_block(x)
  return pandoc.utils.type(x) == "Block"
end

local function warn_not_found(name)
  io.stderr:write("WARNING: Shortcode '" .. name .. "' not found\n")
end

local function result_as_inlines(result, name, raw)
  if result == nil then
    warn_not_found(name)
    return pandoc.Inlines({ pandoc.RawInline(FORMAT, raw) })
  end
  local kind = pandoc.utils.type(result)
  if kind == "Inlines" then
    return result
  elseif kind == "Blocks" then
    return pandoc.utils.blocks_to_inlines(result, { pandoc.Space() })
  elseif kind == "string" then
    return pandoc.Inlines({ pandoc.Str(result) })
  elseif is_inline(result) then
    return pandoc.Inlines({ result })
  elseif is_block(result) then
    return pandoc.utils.blocks_to_inlines({ result }, { pandoc.Space() })
  elseif is_array(result) then
    local items = pandoc.List(result)
    local inlines = items:filter(is_inline)
    if #inlines > 0 then
      return pandoc.Inlines(inlines)
    end
    return pandoc.utils.blocks_to_inlines(items:filter(is_block), { pandoc.Space() })
  elseif type(result) == "table" then
    return pandoc.Inlines({})
  end
  error("Unexpected result from shortcode " .. name)
end

-- Blocks and block results as they are; anything inline (Inlines, a string,
-- an Inline, an array without blocks) becomes one paragraph of what
-- result_as_inlines makes of it.
local function result_as_blocks(result, name, raw)
  if result == nil then
    warn_not_found(name)
    return pandoc.Blocks({ pandoc.RawBlock(FORMAT, raw) })
  end
  local kind = pandoc.utils.type(result)
  if kind == "Blocks" then
    return result
  elseif is_block(result) then
    return pandoc.Blocks({ result })
  end
  local blocks = is_array(result) and pandoc.List(result):filter(is_block) or {}
  if #blocks > 0 then
    return pandoc.Blocks(blocks)
  elseif kind == "Inlines" or kind == "string" or is_inline(result) or is_array(result) then
    return pandoc.Blocks({ pandoc.Para(result_as_inlines(result, name, raw)) })
  elseif type(result) == "table" then
    return pandoc.Blocks({})
  end
  error("Unexpected result from shortcode " .. name)
end

-- shortcodes in prose: the spans Quarto's pre-processing writes -----------

local function is_shortcode_span(el)
  return el ~= nil and el.t == "Span" and el.classes:includes("quarto-shortcode__")
end

local function parse_span(span)
  local params = {}
  for _, el in ipairs(span.content) do
    if el.t == "Span" and el.classes:includes("quarto-shortcode__-param") then
      table.insert(params, { name = el.attributes["data-key"], value = el.attributes["data-value"] or "" })
    end
  end
  local name = table.remove(params, 1)
  return name and name.value or "", params, span.attributes["data-raw"] or ""
end

-- shortcodes in text: the markers Python wrote ------------------------------

-- @@articlekit-shortcode:HEX@@, HEX the hex digits of a JSON call
-- {name, params, raw} (articlekit.article.shortcodes.as_text_marker)
local TEXT_MARKER = "@@articlekit%-shortcode:(%x+)@@"

local function decode_call(hex)
  local json = hex:gsub("%x%x", function(byte) return string.char(tonumber(byte, 16)) end)
  return pandoc.json.decode(json, false)
end

local function replace_in_text(text)
  return (text:gsub(TEXT_MARKER, function(hex)
    local call = decode_call(hex)
    local result = call_handler(call.name, call.params, "text")
    if result == nil then
      warn_not_found(call.name)
      return call.raw
    end
    return pandoc.utils.stringify(result)
  end))
end

local function code_handler(el)
  el.text = replace_in_text(el.text)
  return el
end

-- the two passes -------------------------------------------------------------

local function block_handler(block)
  local node = block
  if (block.t == "Para" or block.t == "Plain") and #block.content == 1 then
    node = block.content[1]
  end
  if not is_shortcode_span(node) then
    return nil
  end
  local name, params, raw = parse_span(node)
  return result_as_blocks(call_handler(name, params, "block"), name, raw)
end

local function inline_handler(span)
  if span.classes:includes("quarto-shortcode__-escaped") then
    if FORMAT:match("gfm") or FORMAT:match("markdown") then
      -- as Quarto writes it: {{< x >}}, not the escaped {{\< x \>}}
      return pandoc.RawInline("markdown", span.attributes["data-value"])
    end
    return pandoc.Str(span.attributes["data-value"])
  end
  if not is_shortcode_span(span) then
    return nil
  end
  local name, params, raw = parse_span(span)
  return result_as_inlines(call_handler(name, params, "inline"), name, raw)
end

function Pandoc(doc)
  doc_meta = doc.meta
  handlers = {}
  for _, file in ipairs(doc.meta.shortcodes or {}) do
    load_shortcode_file(pandoc.utils.stringify(file))
  end
  handlers["meta"] = { handle = handle_meta } -- built-ins override extensions
  doc.meta.shortcodes = nil

  doc = doc:walk({
    Para = block_handler,
    Plain = block_handler,
    CodeBlock = code_handler,
    RawBlock = code_handler,
  })
  doc = doc:walk({
    Span = inline_handler,
    Code = code_handler,
    RawInline = code_handler,
  })
  return doc
end
