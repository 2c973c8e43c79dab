--[[
pdf_finish.lua: Typst layout for the PDF edition, after the shortcodes ran
(see pdf_prepare.lua for the order).

- Tables: Typst sizes the columns to their content (Pandoc's widths come
  from the dashes of the pipe table's separator line, which says nothing
  about the printed page). The provenance table gets fixed shares of the
  width, and its keys, paths and numbers may break after . / _ so none
  runs into the next column. A cell may not start with Typst markup.
- Callouts (::: {.callout-note title="..."}, as callouts.lua finds them)
  become tinted boxes with their title, as Quarto draws them.
- Bound values are set without hyphenation; the mark of a claim that does
  not hold in its status's colour (pdf_style.typ's claim-mark).
]]

-- key, as quoted, raw value, claims, artifact, script, the command that recomputes it
local PROVENANCE_WIDTHS = { 0.2, 0.13, 0.15, 0.12, 0.11, 0.11, 0.18 }

-- keys, paths and long numbers may break after . / _ (a zero-width space);
-- the table (which Pandoc puts in a figure) runs on over as many pages as it needs
local BREAKABLE = '#[\n#show regex("[./_]"): m => m.text + sym.zws\n#show figure: set block(breakable: true)'

-- a line starting with = + - / is Typst markup (a heading, a list item):
-- Pandoc escapes it in paragraphs, not at the start of a table cell
local function guard_cell_start(cell)
  local first = cell.contents[1]
  if first ~= nil and (first.t == "Plain" or first.t == "Para") and first.content[1] ~= nil
      and first.content[1].t == "Str" and first.content[1].text:match("^[=+/-]") then
    first.content:insert(1, pandoc.RawInline("typst", "#[]"))
  end
end

local function each_cell(tbl, fn)
  local rows = pandoc.List(tbl.head.rows) .. pandoc.List(tbl.foot.rows)
  for _, body in ipairs(tbl.bodies) do
    rows = rows .. pandoc.List(body.head) .. pandoc.List(body.body)
  end
  for _, row in ipairs(rows) do
    for _, cell in ipairs(row.cells) do
      fn(cell)
    end
  end
end

local function table_layout(tbl)
  for i, spec in ipairs(tbl.colspecs) do
    tbl.colspecs[i] = { spec[1], nil }
  end
  each_cell(tbl, guard_cell_start)
  return tbl
end

-- the callouts' finder every format shares, in the renderers' filters folder
local callouts = dofile(pandoc.path.join({ pandoc.path.directory(PANDOC_SCRIPT_FILE), "..", "filters", "callouts.lua" }))

local function callout(div)
  local kind = callouts.kind(div)
  if kind == nil then
    return nil
  end
  local color = (kind == "warning" or kind == "important") and "rgb(\"#bf8700\")" or "rgb(\"#0b5cad\")"
  local out = pandoc.Blocks({ pandoc.RawBlock("typst", "#block(width: 100%, inset: (x: 10pt, y: 8pt), "
    .. "fill: " .. color .. ".lighten(94%), stroke: (left: 2.5pt + " .. color .. "))[") })
  if div.attributes.title then
    out:insert(pandoc.Para({ pandoc.Strong({ pandoc.Str(div.attributes.title) }) }))
  end
  out:extend(div.content)
  out:insert(pandoc.RawBlock("typst", "]"))
  return out
end

local function provenance(div)
  if not div.classes:includes("provenance") then
    return nil
  end
  local blocks = div.content:walk({
    Table = function(tbl)
      if #tbl.colspecs == #PROVENANCE_WIDTHS then
        for i, spec in ipairs(tbl.colspecs) do
          tbl.colspecs[i] = { spec[1], PROVENANCE_WIDTHS[i] }
        end
      end
      return tbl
    end,
  })
  local out = pandoc.Blocks({ pandoc.RawBlock("typst", BREAKABLE) })
  out:extend(blocks)
  out:insert(pandoc.RawBlock("typst", "]"))
  return out
end

local function no_hyphens(span)
  if not span.classes:includes("bound-value") then
    return nil
  end
  local out = pandoc.Inlines({ pandoc.RawInline("typst", "#text(hyphenate: false)[") })
  out:extend(span.content)
  out:insert(pandoc.RawInline("typst", "]"))
  return out
end

-- value.lua's mark in the PDF: a Span whose attribute claim-mark names the
-- class bind gave it (articlekit.core.status: failed or inconclusive), all of
-- it in that class's colour; the marks inside code get theirs from the show
-- rules articlekit.render.formats.pdf writes
local function claim_mark(span)
  local class = span.attributes["claim-mark"]
  if class == nil then
    return nil
  end
  -- the bound tree's check (articlekit.article.prose_guard) lets only
  -- articlekit's own classes through; raw Typst is never written from a
  -- value that is not one of them, whatever reached this filter
  if not class:match("^claim%-%l+$") then
    error("claim-mark " .. string.format("%q", class) .. " is not a claim's class: the bound tree was not checked")
  end
  local out = pandoc.Inlines({ pandoc.RawInline("typst", '#claim-mark("' .. class .. '")[') })
  out:extend(span.content)
  out:insert(pandoc.RawInline("typst", "]"))
  return out
end

function Pandoc(doc)
  doc = doc:walk({ Table = table_layout })
  doc = doc:walk({ Div = provenance })
  doc = doc:walk({ Div = callout })
  return doc:walk({ Span = function(span) return no_hyphens(span) or claim_mark(span) end })
end
