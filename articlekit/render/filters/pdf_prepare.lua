--[[
pdf_prepare.lua: marks for the PDF edition, before the shortcodes run.

`articlekit pdf` runs this on the markdown as Quarto's pre-processing leaves
it (shortcodes as spans), then quarto_shortcodes.lua, then pdf_finish.lua:

- The section that places {{< provenance >}} becomes the appendix (new,
  landscape pages, lettered "Appendix A"), and the table is wrapped in a Div of class
  "provenance" so that pdf_finish.lua can find it once it exists.
- Each value shortcode in prose is wrapped in a Span of class "bound-value",
  so the number it becomes is never hyphenated at a line end.
- Image sources become absolute paths: Typst resolves them against the
  folder of the .typ file, a temporary one; Pandoc runs in the article's
  folder, where relative paths start.
]]

-- a landscape page: the provenance table's seven columns need the width
local APPENDIX = [[
#set page(flipped: true)
#counter(heading).update(0)
#set heading(numbering: (..n) => if n.pos().len() == 1 { "Appendix " + numbering("A.", ..n) } else { numbering("A.1", ..n) })]]

local function shortcode_name(el)
  if el == nil or el.t ~= "Span" or not el.classes:includes("quarto-shortcode__") then
    return nil
  end
  local first = el.content[1]
  return first ~= nil and first.t == "Span" and first.attributes["data-value"] or nil
end

local function sole_shortcode(block)
  if (block.t == "Para" or block.t == "Plain") and #block.content == 1 then
    return shortcode_name(block.content[1])
  end
  return nil
end

local function mark_appendix(blocks)
  local last_header = nil
  for i, block in ipairs(blocks) do
    if block.t == "Header" then
      last_header = i
    elseif sole_shortcode(block) == "provenance" then
      blocks[i] = pandoc.Div({ block }, pandoc.Attr("", { "provenance" }))
      if last_header ~= nil then
        blocks:insert(last_header, pandoc.RawBlock("typst", APPENDIX))
      end
      return blocks
    end
  end
  return blocks
end

-- a value alone in its paragraph keeps Quarto's "block" context: left as is
local function wrap_values(inlines)
  if #inlines == 1 then
    return nil
  end
  return inlines:map(function(el)
    if shortcode_name(el) == "value" then
      return pandoc.Span({ el }, pandoc.Attr("", { "bound-value" }))
    end
    return el
  end)
end

local function absolute_image(img)
  if not img.src:match("^%a[%w+.-]*:") and not pandoc.path.is_absolute(img.src) then
    img.src = pandoc.path.join({ pandoc.system.get_working_directory(), img.src })
  end
  return img
end

function Pandoc(doc)
  doc.blocks = mark_appendix(doc.blocks)
  return doc:walk({ Inlines = wrap_values, Image = absolute_image })
end
