--[[
crossref.lua: cross-references on the Pandoc route, numbered as Quarto
numbers them, so that a figure, table, equation or section has the same
number in every edition (Quarto's own crossref writes the page and its
markdown on the Quarto route; Pandoc writes the PDF, Word and JATS always).

- A figure with an id fig-*, a table with an id tbl-* (`: caption {#tbl-x}`)
  is numbered in document order, its caption starting "Figure N: " or
  "Table N: ". An unlabelled figure is not counted (nor is it by Quarto),
  so the PDF's Typst numbering is off (pdf_style.typ) and these words are
  its captions' numbers too.
- A display equation followed by {#eq-x} (which Pandoc alone leaves as
  text) is numbered: the {#eq-x} goes, the equation is wrapped in a span
  with that id, and "\qquad(N)" ends its TeX, as Quarto writes it for
  formats without MathJax.
- A section with an id sec-* is numbered by its place among the headings,
  from the document's top level (1, 2.1, ...), as Quarto counts them.
- A reference @fig-x, @tbl-x, @eq-x, @sec-x (Pandoc reads it as a
  citation) becomes a link to its id: "Figure N", "Table N", "Equation N",
  "Section N", with a no-break space, as Quarto writes it. A reference to
  an id the document lacks is refused before any renderer runs, with its
  line (articlekit.article.prose_guard); here it stops the render.

Every Pandoc-route format runs it after bound.lua and before the layout
filters (articlekit.render.pandoc_route.filter_files, the PDF's own list).
]]

local KINDS = { fig = "Figure", tbl = "Table", eq = "Equation", sec = "Section" }
local NBSP = "\u{00A0}"

local numbers = {} -- id -> its number, as text

local function kind_of(id)
  local prefix = id:match("^(%a+)%-")
  return prefix and KINDS[prefix] and prefix or nil
end

local function prefixed(caption_blocks, word, number)
  local inlines = pandoc.utils.blocks_to_inlines(caption_blocks)
  inlines:insert(1, pandoc.Str(word .. NBSP .. number .. ":"))
  if #inlines > 1 then
    inlines:insert(2, pandoc.Space())
  end
  return pandoc.Blocks({ pandoc.Plain(inlines) })
end

-- sections: a counter per level, from the top level the document uses
local function number_sections(blocks)
  local top = nil
  blocks:walk({ Header = function(h) top = math.min(top or h.level, h.level) end })
  local counters = {}
  return blocks:walk({
    Header = function(h)
      local depth = h.level - (top or 1) + 1
      counters[depth] = (counters[depth] or 0) + 1
      for deeper = depth + 1, #counters do
        counters[deeper] = nil
      end
      if h.identifier:match("^sec%-") then
        local parts = {}
        for i = 1, depth do
          parts[i] = tostring(counters[i] or 0)
        end
        numbers[h.identifier] = table.concat(parts, ".")
      end
    end,
  })
end

local counts = { fig = 0, tbl = 0, eq = 0 }

local function next_number(kind, id)
  counts[kind] = counts[kind] + 1
  numbers[id] = tostring(counts[kind])
  return numbers[id]
end

-- a figure (fig-) or a table (tbl-): numbered, its caption saying so
local function captioned(kind)
  return function(el)
    if el.identifier:match("^" .. kind .. "%-") then
      el.caption.long = prefixed(el.caption.long, KINDS[kind], next_number(kind, el.identifier))
      return el
    end
  end
end

-- Math(display), then (a space and) "{#eq-x}": the equation, numbered.
-- A list with no display math is left as it is (nil): most of them, and
-- handing each back to Pandoc rebuilt would cost a third of the filter.
local function equations(inlines)
  local has_display = false
  for _, el in ipairs(inlines) do
    if el.t == "Math" and el.mathtype == "DisplayMath" then
      has_display = true
      break
    end
  end
  if not has_display then
    return nil
  end
  local out, i = pandoc.Inlines({}), 1
  while i <= #inlines do
    local el = inlines[i]
    local label_at = (inlines[i + 1] and inlines[i + 1].t == "Space") and i + 2 or i + 1
    local label = inlines[label_at]
    local id = label and label.t == "Str" and label.text:match("^{#(eq%-[%w_.:-]+)}$")
    if el.t == "Math" and el.mathtype == "DisplayMath" and id then
      local n = next_number("eq", id)
      local math = pandoc.Math("DisplayMath", el.text:gsub("%s+$", "") .. " \\qquad(" .. n .. ")")
      out:insert(pandoc.Span({ math }, pandoc.Attr(id)))
      i = label_at + 1
    else
      out:insert(el)
      i = i + 1
    end
  end
  return out
end

local function reference(cite)
  if #cite.citations ~= 1 then
    return nil
  end
  local id = cite.citations[1].id
  local kind = kind_of(id)
  if kind == nil then
    return nil -- a citation of the bibliography, citeproc's
  end
  if numbers[id] == nil then
    error("articlekit: the reference @" .. id .. " names no " .. KINDS[kind]:lower() .. " of the article")
  end
  return pandoc.Link({ pandoc.Str(KINDS[kind] .. NBSP .. numbers[id]) }, "#" .. id, "", pandoc.Attr("", { "quarto-xref" }))
end

function Pandoc(doc)
  doc.blocks = number_sections(doc.blocks)
  doc.blocks = doc.blocks:walk({ Inlines = equations })
  doc.blocks = doc.blocks:walk({ Figure = captioned("fig"), Table = captioned("tbl") })
  doc.blocks = doc.blocks:walk({ Cite = reference })
  return doc
end
