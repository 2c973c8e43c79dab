--[[
value.lua: the article's numbers, looked up, never computed here.

Shortcodes (Quarto >= 1.5 API: handler(args, kwargs, meta, raw_args, context)):

  {{< value KEY [fmt="SPEC"] [expect="CLAIM"] >}}  a value, as formatted by Python
  {{< value KEY code=true >}}                      ... printed as inline code
  {{< value KEY band="outside" >}}                 ... outside its seeds' 5-95 % band: the note beside it
  {{< source KEY >}}                               the key, linked to its provenance row:
                                                   the way back for values printed in code blocks
  {{< claim KEY expect="CLAIM" >}}                 a checked claim; prints nothing
  {{< provenance >}}                               the table every number links to
  {{< departures >}}                               where this build departs from the edition

`python -m articlekit bind` has already resolved each occurrence into the
bindings file (metadata `value-bindings`): formatted text, raw value, claim
result, source. This file parses no shortcode (Quarto, or for the Pandoc
route articlekit/article/shortcodes.py, hands it the arguments); it builds
the lookup id from them, finds the entry and wraps its text for the output
format. A key with no entry is an error, never a blank, except on the page that
Quarto's own `quarto preview` shows when the article could not be bound
(metadata `value-unbound: mark`, set only by articlekit's pre-render,
articlekit/render/quarto_hooks.py): there such a shortcode prints a
visible mark and the page's banner says why.

The lookup id is "KEY|FMT|EXPECT", as articlekit.article.shortcodes.lookup_id
defines it (the contract; tests/test_render.py holds both to it for every
shortcode of the article): KEY the first argument, FMT fmt=, EXPECT
expect=, each unquoted, white space runs as one space, trimmed, empty when
absent. In prose (context "inline"/"block") Quarto hands over values with
their quotes already removed, as strings or inlines (stringify both); inside
code (context "text") it hands the tokens as written, quotes kept, so they
are removed here.
]]

local bindings_doc = nil -- read once per render
local marking = nil -- true: an unbound shortcode prints a mark (a failure page of quarto preview)
local placed = {} -- anchors whose first place in the prose has its id (at-<anchor>)

-- Stop the render with one message. Not error(): Quarto replaces the global
-- error with a function that only logs and returns (quarto-cli
-- src/resources/filters/common/log.lua), so the handler would carry on and
-- fail a second time, misleadingly. assert raises under Pandoc and Quarto.
local function fail(message)
  assert(false, message)
end

local function as_string(x)
  if x == nil then
    return ""
  end
  if type(x) == "string" then
    return x
  end
  return pandoc.utils.stringify(x)
end

local function unquote(s)
  local first, last = s:sub(1, 1), s:sub(-1)
  if #s >= 2 and first == last and (first == '"' or first == "'") then
    s = s:sub(2, -2):gsub("\\" .. first, first):gsub("\\\\", "\\")
  end
  return s
end

-- One argument as the lookup id spells it: unquoted in "text" context, white
-- space runs collapsed (stringified inlines join words with single spaces).
local function clean(x, context)
  local s = as_string(x)
  if context == "text" then
    s = unquote(s)
  end
  s = s:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
  return s
end

local function is_html()
  if quarto ~= nil and quarto.doc ~= nil and quarto.doc.is_format ~= nil then
    return quarto.doc.is_format("html")
  end
  return FORMAT:match("html") ~= nil
end

local function input_dir()
  local input = quarto ~= nil and quarto.doc ~= nil and quarto.doc.input_file or nil
  input = input or (PANDOC_STATE.input_files or {})[1]
  if input == nil or input == "-" then
    return nil
  end
  return pandoc.path.directory(input)
end

-- a relative path is tried as given, then beside the input document
local function read_file(path)
  local f = io.open(path, "r")
  local dir = input_dir()
  if f == nil and dir and not pandoc.path.is_absolute(path) then
    f = io.open(pandoc.path.join({ dir, path }), "r")
  end
  if f == nil then
    return nil
  end
  local text = f:read("a")
  f:close()
  return text
end

-- The failure page of `quarto preview` (metadata value-unbound: mark):
-- its banner lists the problems, and what could not be bound is marked.
local function marks_unbound(meta)
  if marking == nil then
    marking = as_string(meta["value-unbound"]) == "mark"
  end
  return marking
end

local function load_bindings(meta)
  if bindings_doc ~= nil then
    return bindings_doc
  end
  local path = as_string(meta["value-bindings"])
  if marks_unbound(meta) and (path == "" or read_file(path) == nil) then
    bindings_doc = { bindings = {} } -- nothing bound yet: every shortcode is marked
    return bindings_doc
  end
  if path == "" then
    fail("value shortcode: document metadata 'value-bindings' is not set; "
      .. "render with -M value-bindings:build/bindings.json (made by python -m articlekit bind)")
  end
  local text = read_file(path)
  if text == nil then
    fail("value shortcode: cannot read the bindings file " .. path
      .. "; run python -m articlekit bind first")
  end
  if pandoc.json ~= nil then
    bindings_doc = pandoc.json.decode(text, false)
  else -- Pandoc < 3.1.1 (old Quarto): Quarto's own JSON module
    bindings_doc = quarto.json.decode(text)
  end
  if type(bindings_doc) ~= "table" or type(bindings_doc.bindings) ~= "table" then
    bindings_doc = nil
    fail("value shortcode: " .. path .. " is not a bindings file (no 'bindings' table); "
      .. "make it with python -m articlekit bind")
  end
  return bindings_doc
end

-- KEY|FMT|EXPECT: articlekit.article.shortcodes.lookup_id's contract
local function lookup_id(args, kwargs, context)
  return clean(args[1], context) .. "|" .. clean(kwargs["fmt"], context) .. "|" .. clean(kwargs["expect"], context)
end

local function binding_for(args, kwargs, meta, context, name)
  local key = clean(args[1], context)
  if key == "" then
    fail(name .. " shortcode: missing KEY, e.g. {{< " .. name .. " experiment.result >}}")
  end
  local id = lookup_id(args, kwargs, context)
  local b = load_bindings(meta).bindings[id]
  if b == nil and marks_unbound(meta) then
    return nil, key
  end
  if b == nil then
    fail(name .. " shortcode: no binding for key '" .. key .. "' (lookup id '" .. id .. "'); "
      .. "the bindings file is older than the article or the key is misspelled: rerun python -m articlekit bind")
  end
  return b
end

-- What the page shows beside a claim that does not hold (failed, or
-- inconclusive), as bind wrote it into the claim: {text, class}. Its words
-- and class are articlekit.core.status's, never spelled here. nil: nothing.
local function claim_mark(b)
  if type(b.claim) ~= "table" then
    return nil
  end
  if b.claim.holds == false and type(b.claim.mark) ~= "table" then -- never a claim left unmarked
    fail("value shortcode: the claim '" .. b.key .. " " .. b.expect .. "' does not hold, but its binding "
      .. "carries no mark to show: the bindings file is older than articlekit; rerun python -m articlekit bind")
  end
  return type(b.claim.mark) == "table" and b.claim.mark or nil
end

local function marked(text, class, tooltip)
  if is_html() then
    return pandoc.Span({ pandoc.Str(text) }, pandoc.Attr("", { class }, { title = tooltip }))
  end
  if FORMAT:match("typst") then -- the PDF: pdf_finish.lua colours it by its class
    return pandoc.Span({ pandoc.Strong({ pandoc.Str(text) }) }, pandoc.Attr("", {}, { ["claim-mark"] = class }))
  end
  return pandoc.Strong({ pandoc.Str(text) })
end

local function warning(b)
  local mark = claim_mark(b)
  return marked(mark.text .. ": " .. b.expect, mark.class, b.claim.message)
end

-- The notes beside a value at this place, after its claim's mark, as
-- articlekit.article.bound writes them: {text, class, tooltip} each. A seeded
-- value outside its seeds' 5-95 % band (bind wrote b.band) shows the note
-- wherever it is printed (articlekit.article.seed_band.shown); a notice
-- (strict=false) everywhere.
local function notes(b, kwargs, context)
  local out = {}
  if type(b.band) == "table" then
    table.insert(out, { b.band.disclosed.text, b.band.disclosed.class, b.band.message })
  end
  if type(b.notice) == "table" then
    table.insert(out, { b.notice.text, b.notice.class, b.notice.message })
  end
  return out
end

-- What an unbound shortcode prints on the failure page: the key, marked.
local function unbound(key, context)
  local text = "⚠ " .. key .. " (not bound)"
  if context == "text" then
    return text
  end
  if not is_html() then
    return pandoc.Inlines({ pandoc.Strong({ pandoc.Str(text) }) })
  end
  return pandoc.Inlines({ pandoc.Span({ pandoc.Str(text) }, pandoc.Attr("", { "unbound-value" },
    { title = "not bound: the banner at the top of the page says why",
      style = "color:#7a1414;background:#fde8e8;font-weight:bold" })) })
end

local function value(args, kwargs, meta, raw_args, context)
  local b, key = binding_for(args, kwargs, meta, context, "value")
  if b == nil then
    return unbound(key, context)
  end
  if context == "text" then
    -- inside code: the plain string, nothing that could become markup
    local text = b.text
    if claim_mark(b) then
      text = text .. "  " .. claim_mark(b).text .. ": " .. b.expect
    end
    for _, note in ipairs(notes(b, kwargs, context)) do
      text = text .. "  " .. note[1]
    end
    return text
  end
  local shown = pandoc.Str(b.text)
  if clean(kwargs["code"], context) == "true" then
    shown = pandoc.Code(b.text)
  end
  local number = shown
  if is_html() then
    -- the first place the prose prints a key is where the audit links to
    local id = ""
    if not placed[b.anchor] then
      placed[b.anchor] = true
      id = "at-" .. b.anchor
    end
    number = pandoc.Link({ shown }, "#" .. b.anchor, b.title, pandoc.Attr(id, { "bound-value" }))
  end
  local out = pandoc.Inlines({ number })
  if claim_mark(b) then
    out:insert(pandoc.Space())
    out:insert(warning(b))
  end
  for _, note in ipairs(notes(b, kwargs, context)) do
    out:insert(pandoc.Space())
    out:insert(marked(note[1], note[2], note[3]))
  end
  return out
end

local function claim(args, kwargs, meta, raw_args, context)
  local b, key = binding_for(args, kwargs, meta, context, "claim")
  if b == nil then
    return unbound(key, context)
  end
  if claim_mark(b) then
    if context == "text" then
      return claim_mark(b).text .. ": " .. b.key .. " " .. b.expect
    end
    return pandoc.Inlines({ warning(b) })
  end
  if context == "text" or not is_html() then
    return pandoc.Inlines({})
  end
  -- an empty marker, so the HTML shows which claims were checked where
  return pandoc.Inlines({ pandoc.Span({}, pandoc.Attr("", { "claim-checked" },
    { ["data-claim"] = b.key .. " " .. b.expect })) })
end

-- A path in the provenance table may wrap after a slash, a key after a dot,
-- never inside a name: the table stays narrow enough to read on a phone.
local function breakable_code(code)
  local text = code.text:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;")
  text = text:gsub(text:find("/", 1, true) and "(/)" or "(%.)", "%1<wbr>")
  return pandoc.RawInline("html", "<code>" .. text .. "</code>")
end

-- A key split after each dot with <wbr>: a long key may wrap on a phone,
-- and copying it still gives the key.
local function breakable_key(key)
  local parts = pandoc.Inlines({})
  for piece in key:gmatch("[^.]+%.?") do
    if #parts > 0 then
      parts:insert(pandoc.RawInline("html", "<wbr>"))
    end
    parts:insert(pandoc.Str(piece))
  end
  return parts
end

local function source(args, kwargs, meta, raw_args, context)
  local b, key = binding_for(args, kwargs, meta, context, "source")
  if b == nil then
    return unbound(key, context)
  end
  if not is_html() then
    return pandoc.Inlines({ pandoc.Code(b.key) })
  end
  return pandoc.Inlines({ pandoc.Link(breakable_key(b.key), "#" .. b.anchor, b.title,
    pandoc.Attr("", { "bound-source" })) })
end

-- A block of markdown that bind wrote into the bindings file.
local function block_from(field)
  return function(args, kwargs, meta, raw_args, context)
    local md = load_bindings(meta)[field]
    if md == nil and marks_unbound(meta) then
      md = "**⚠ " .. field:gsub("_md$", "") .. ": not made (the article could not be bound)**"
    end
    if md == nil then
      fail(field .. " missing from the bindings file: rerun python -m articlekit bind")
    end
    if context == "text" then
      return md
    end
    local blocks = pandoc.read(md, "markdown").blocks
    if not is_html() then
      -- markdown output is for diffs: keep the anchors' text, drop the spans
      -- and the bound values' links, as value() prints them there
      blocks = blocks:walk({
        Span = function(span) return span.content end,
        Link = function(link)
          if link.classes:includes("bound-value") then
            return link.content
          end
        end,
      })
    end
    return blocks
  end
end

-- The provenance table on the page: keys and paths breakable only after a
-- dot or slash, in a div the stylesheet knows (class provenance) and that
-- Quarto's grid lets span the page, not only the text (column-screen-inset).
local function page_wide(handler)
  return function(args, kwargs, meta, raw_args, context)
    local blocks = handler(args, kwargs, meta, raw_args, context)
    if context == "text" or not is_html() then
      return blocks
    end
    blocks = blocks:walk({ Code = breakable_code })
    return pandoc.Blocks({ pandoc.Div(blocks, pandoc.Attr("", { "provenance", "column-screen-inset" })) })
  end
end

return {
  ["value"] = value,
  ["claim"] = claim,
  ["source"] = source,
  ["provenance"] = page_wide(block_from("provenance_md")),
  ["departures"] = block_from("departures_md"),
}
