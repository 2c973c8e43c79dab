--[[
pdf_prepare.lua: marks for the PDF edition, before the bound spans are lowered.

`articlekit pdf` runs this on the bound document (articlekit/article/bound.py:
every shortcode resolved), then bound.lua, then pdf_finish.lua:

- The section that places the provenance table (its Div of class
  "provenance", which pdf_finish.lua finds) and those after it become the
  supplement: new, landscape pages numbered S1, S2, ..., sections S1, S2,
  after a title of its own; the body ends before it.
- Each bound value in prose (a link of class "bound-value") is wrapped in a
  Span of that class, so the number it becomes is never hyphenated at a
  line end.
- Image sources become absolute paths: Typst resolves them against the
  folder of the .typ file, a temporary one; Pandoc runs in the article's
  folder, where relative paths start.
]]

-- The supplement: the provenance table and what follows it leave the
-- article's body for material of their own, as a journal wants it: a new
-- page, landscape (the table's seven columns need the width), pages
-- numbered S1, S2, ... (the PDF's page labels too), sections S1, S2
local APPENDIX = [[
#pagebreak(weak: true)
#set page(flipped: true, numbering: "S1")
#counter(page).update(1)
#align(center, text(size: 14pt, weight: "bold")[Supplementary material])
#counter(heading).update(0)
#set heading(numbering: (..n) => if n.pos().len() == 1 { "S" + numbering("1.", ..n) } else { "S" + numbering("1.1", ..n) })]]

local function mark_appendix(blocks)
  local last_header = nil
  for i, block in ipairs(blocks) do
    if block.t == "Header" then
      last_header = i
    elseif block.t == "Div" and block.classes:includes("provenance") then
      if last_header ~= nil then
        blocks:insert(last_header, pandoc.RawBlock("typst", APPENDIX))
      end
      return blocks
    end
  end
  return blocks
end

-- a value alone in its paragraph is left as is
local function wrap_values(inlines)
  if #inlines == 1 then
    return nil
  end
  return inlines:map(function(el)
    if el.t == "Link" and el.classes:includes("bound-value") then
      return pandoc.Span({ el }, pandoc.Attr("", { "bound-value" }))
    end
    return el
  end)
end

-- The Typst writer reads an image's path as a URL and decodes each %XX in
-- it: the working folder's % are written %25 (a folder named `a%20b` is not
-- `a b`); the article's own link stays as the author wrote it.
local function absolute_image(img)
  if not img.src:match("^%a[%w+.-]*:") and not pandoc.path.is_absolute(img.src) then
    local folder = pandoc.system.get_working_directory():gsub("%%", "%%25")
    img.src = pandoc.path.join({ folder, img.src })
  end
  return img
end

function Pandoc(doc)
  doc.blocks = mark_appendix(doc.blocks)
  return doc:walk({ Inlines = wrap_values, Image = absolute_image })
end
