--[[
bound.lua: the bound document's spans, written as the output format shows them.

`articlekit bind` writes the article with every shortcode resolved
(articlekit/article/bound.py says what each becomes); this filter looks
nothing up. It only decides how each piece looks in the format at hand:

  piece                     page (HTML)                 PDF (Typst)            other formats
  value  .bound-value link  the link, as bound          the number             the number
  claim-mark= span          span of the mark's class    bold, claim-mark=      bold (Word: in the
                                                                               style "Claim Failed"...)
  .claim-checked span       kept (shows what was checked) dropped               dropped
  .bound-source link        the key, breakable at dots  the key as code        the key as code
  .bound-meta span          the metadata field's text   (same)                 (same)
  .provenance div           breakable keys and paths    the div, its anchors   its table, without
                                                        and links dropped      anchors or links
  .bound-departures div     its blocks                  (same, as other)       its blocks, plain

"Other formats" are the markdown that diffs read (its text must not move
with a link's target), Word and JATS unless their module says otherwise
(metadata `bound-links: keep` keeps the links and anchors, which both can
carry). Quarto runs this filter as the first of the build's (`filters:`),
Pandoc as the first after its reader.
]]

local FORMAT_NAME = FORMAT

local html = nil -- asked once: each element asks

local function is_html()
  if html == nil then
    if quarto ~= nil and quarto.doc ~= nil and quarto.doc.is_format ~= nil then
      html = quarto.doc.is_format("html")
    else
      html = FORMAT_NAME:match("html") ~= nil
    end
  end
  return html
end

local function is_typst()
  return FORMAT_NAME:match("typst") ~= nil
end

local function is_docx()
  return FORMAT_NAME == "docx"
end

-- A claim mark's Word character style: its class in words (each dash a
-- space, each word capitalised), as articlekit/render/formats/docx.py colours it.
local function word_style(class)
  return (class:gsub("-", " "):gsub("(%a)(%w*)", function(first, rest) return first:upper() .. rest end))
end

local keep_links = false -- metadata bound-links: keep (Word, JATS)
local metadata = nil

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

-- A path in the provenance table may wrap after a slash, a key after a dot,
-- never inside a name: the table stays narrow enough to read on a phone.
local function breakable_code(code)
  local text = code.text:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;")
  text = text:gsub(text:find("/", 1, true) and "(/)" or "(%.)", "%1<wbr>")
  return pandoc.RawInline("html", "<code>" .. text .. "</code>")
end

local function meta_text(name)
  local node = metadata[name]
  if node == nil then
    io.stderr:write("WARNING: unknown meta key " .. name .. " in a meta shortcode\n")
    return pandoc.Inlines({ pandoc.Strong({ pandoc.Str("?meta:" .. name) }) })
  end
  if pandoc.utils.type(node) == "Inlines" then
    return node
  end
  return pandoc.Inlines(pandoc.utils.stringify(node))
end

local function first_text(inlines)
  return pandoc.utils.stringify(inlines)
end

local function inline(el)
  if el.t == "Link" and el.classes:includes("bound-value") then
    if is_html() or keep_links then
      return el
    end
    return el.content
  end
  if el.t == "Link" and el.classes:includes("bound-source") then
    if is_html() then
      return pandoc.Link(breakable_key(first_text(el.content)), el.target, el.title, pandoc.Attr("", { "bound-source" }))
    end
    if keep_links then
      return pandoc.Link(el.content, el.target, el.title)
    end
    return el.content
  end
  if el.t ~= "Span" then
    return nil
  end
  local mark = el.attributes["claim-mark"]
  if mark ~= nil then
    if is_html() then
      return pandoc.Span(el.content, pandoc.Attr("", { mark }, { title = el.attributes["title"] }))
    end
    if is_typst() then -- pdf_finish.lua colours it by its class
      return pandoc.Span({ pandoc.Strong(el.content) }, pandoc.Attr("", {}, { ["claim-mark"] = mark }))
    end
    if is_docx() then -- bold, in its character style (the reference document's colour)
      return pandoc.Span({ pandoc.Strong(el.content) }, pandoc.Attr("", {}, { ["custom-style"] = word_style(mark) }))
    end
    return pandoc.Strong(el.content)
  end
  if el.classes:includes("claim-checked") then
    return is_html() and el or pandoc.Inlines({})
  end
  if el.classes:includes("bound-meta") then
    return meta_text(el.attributes["name"])
  end
  return nil
end

-- markdown output is for diffs: keep the anchors' text, drop the spans and
-- the bound values' links (Word and JATS keep them: bound-links: keep)
local function plain_blocks(blocks)
  if keep_links then
    return blocks
  end
  return blocks:walk({
    Span = function(span) return span.content end,
    Link = function(link)
      if link.classes:includes("bound-value") then
        return link.content
      end
    end,
  })
end

-- Under Quarto, the provenance table goes on the page as the HTML Quarto
-- would write for it: Quarto's own filters walk the document many times
-- over, and a table of hundreds of rows made most of the page's render
-- (0.8 of 3 s of Quarto's Pandoc step on this article). So it is written
-- here, as Quarto writes every table (classes caption-top and table on
-- the table, header on the head's rows, odd and even on the body's; lines
-- unwrapped), made focusable as scroll_regions.lua makes every table,
-- without the inline width Pandoc's writer gives a table whose columns
-- have widths (Quarto drops it; it would override page.css).
local scroll_regions = nil -- scroll_regions.lua's filter, loaded on the first table

local function as_quarto_writes(tbl)
  if scroll_regions == nil then
    local here = pandoc.path.directory(PANDOC_SCRIPT_FILE)
    scroll_regions = dofile(pandoc.path.join({ here, "scroll_regions.lua" }))[1]
  end
  tbl.classes = { "caption-top", "table" }
  for _, row in ipairs(tbl.head.rows) do
    row.attr.classes = { "header" }
  end
  for _, body in ipairs(tbl.bodies) do
    for i, row in ipairs(body.body) do
      row.attr.classes = { i % 2 == 1 and "odd" or "even" }
    end
  end
  tbl = scroll_regions.Table(tbl)
  local written = pandoc.write(pandoc.Pandoc({ tbl }), "html", { wrap_text = "none" })
  return pandoc.RawBlock("html", (written:gsub('^(<table[^>]-) style="width:100%%;"', "%1", 1)))
end

local function block(div)
  if div.classes:includes("bound-departures") then
    return is_html() and div.content or plain_blocks(div.content)
  end
  if div.classes:includes("provenance") then
    if is_html() then
      local content = div.content:walk({ Code = breakable_code })
      if quarto ~= nil then
        content = content:walk({ Table = as_quarto_writes })
      end
      return pandoc.Div(content, div.attr)
    end
    if is_typst() then -- pdf_finish.lua finds the table by the div
      return pandoc.Div(plain_blocks(div.content), pandoc.Attr("", { "provenance" }))
    end
    return plain_blocks(div.content)
  end
  return nil
end

function Pandoc(doc)
  metadata = doc.meta
  keep_links = pandoc.utils.stringify(doc.meta["bound-links"] or "") == "keep"
  doc.blocks = doc.blocks:walk({ Div = block })
  -- links and spans alone: a filter on every inline hands each of the
  -- article's tens of thousands of words and spaces to Lua, most of this
  -- filter's time on a page
  doc.blocks = doc.blocks:walk({ Link = inline, Span = inline })
  return doc
end
