--[[
quarto_shortcodes.lua: run Quarto shortcode extensions under plain Pandoc.

Where Quarto is not installed, `python -m articlekit render` runs Pandoc with
this filter so the packaged shortcode file (articlekit/render/quarto/_extensions/value/
value.lua) runs unchanged. It mirrors what Quarto >= 1.5 does (quarto-cli,
src/resources/filters/customnodes/shortcodes.lua, quarto-pre/
shortcodes-handlers.lua, pandoc/datadir/lpegshortcode.lua):

- Before Pandoc parses the markdown, Quarto rewrites each prose shortcode
  into a span of class "quarto-shortcode__" holding one empty
  "quarto-shortcode__-param" span per argument (data-value, data-key,
  data-raw). articlekit/article/shortcodes.py writes exactly those spans, so this
  filter reads arguments the way Quarto's Shortcode AST node does.
- Shortcode files are listed in the metadata field `shortcodes` (Quarto's
  own document option); each is loaded with loadfile in its own
  environment, and the functions of the table it returns (or, failing
  that, the globals it defines) become handlers by name.
- First pass (blocks): a Para or Plain holding only a shortcode calls the
  handler with context "block"; CodeBlock and RawBlock text is scanned for
  shortcodes, called with context "text".
- Second pass (inlines): other shortcode spans get context "inline"; Code
  and RawInline text, link targets and image sources get "text".
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
- `{{{< ... >}}}` prints as `{{< ... >}}`; code blocks with
  shortcodes="false" are left alone.
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

-- shortcodes in text: a scanner for what lpegshortcode's code parser reads --

-- -> the token at i (as written, quotes kept; {name, value} for key=value),
-- or nil at >}} or the end; then the position after it
local function next_token(s, i)
  i = s:find("[^%s]", i) or #s + 1
  if s:sub(i, i + 2) == ">}}" or i > #s then
    return nil, i
  end
  local c = s:sub(i, i)
  if c == '"' or c == "'" then
    local j = i + 1
    while j <= #s and s:sub(j, j) ~= c do
      if s:sub(j, j) == "\\" then
        j = j + 1
      end
      j = j + 1
    end
    return s:sub(i, j), j + 1
  end
  local j = i
  while j <= #s and not s:sub(j, j):match("%s") and s:sub(j, j + 2) ~= ">}}" do
    if s:sub(j, j) == "=" and j > i then
      -- key=value: the value may be quoted and hold spaces
      local value, k = next_token(s, j + 1)
      return { name = s:sub(i, j - 1), value = value or "" }, k
    end
    j = j + 1
  end
  return s:sub(i, j - 1), j
end

local function replace_in_text(text)
  if not text:find("{{<", 1, true) then
    return text
  end
  local out, pos = {}, 1
  while true do
    local at = text:find("{{<", pos, true)
    if at == nil then
      table.insert(out, text:sub(pos))
      break
    end
    if at > 1 and text:sub(at - 1, at - 1) == "{" then
      -- escaped {{{< ... >}}}: print the shortcode itself
      local close = text:find(">}}}", at, true)
      if close == nil then
        table.insert(out, text:sub(pos))
        break
      end
      table.insert(out, text:sub(pos, at - 2) .. text:sub(at, close + 2))
      pos = close + 4
    else
      table.insert(out, text:sub(pos, at - 1))
      local params, i = {}, at + 3
      while true do
        local token
        token, i = next_token(text, i)
        if token == nil then
          break
        end
        table.insert(params, type(token) == "table" and token or { value = token })
      end
      local close = text:find(">}}", i, true)
      if close == nil then
        error("unterminated shortcode in text: " .. text:sub(at, at + 60))
      end
      local raw = text:sub(at, close + 2)
      local name = table.remove(params, 1)
      local result = name and call_handler(name.value, params, "text")
      if result == nil then
        warn_not_found(name and name.value or "")
        table.insert(out, raw)
      else
        table.insert(out, pandoc.utils.stringify(result))
      end
      pos = close + 3
    end
  end
  return table.concat(out)
end

local function code_handler(el)
  if el.attr and el.attr.attributes["shortcodes"] == "false" then
    return nil
  end
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
    Link = function(el)
      el.target = replace_in_text(el.target)
      return el
    end,
    Image = function(el)
      el.src = replace_in_text(el.src)
      return el
    end,
  })
  return doc
end
