-- Boxes that scroll sideways take keyboard focus, with a name.
--
-- A code block or table wider than the column scrolls inside its own box
-- (page.css, the article's style sheet); a keyboard user scrolls it only
-- once it can take focus, and a screen reader names what it reached. So
-- each code block is a focusable group named by its language and length
-- ("python code, 12 lines"); each table is focusable, named by its caption
-- when it has one, else by its column headers; so is each displayed
-- equation. A group, not a region: a page of twenty listings would
-- otherwise list twenty landmarks. A name never counts blocks (a preview
-- renders the page in pieces) nor quotes code (a shortcode written in it
-- would be quoted unresolved). Pandoc puts a highlighted block's
-- attributes on its div.sourceCode, which is the box that scrolls
-- (page.css). Under Quarto this runs after Quarto's own filters (page.py),
-- which write the tables anew. HTML only: the markdown and the PDF do not
-- scroll.

local function words(n, one, many)
  return tostring(n) .. " " .. (n == 1 and one or many)
end

local function code_name(block)
  local lines = select(2, block.text:gsub("\n", "\n")) + 1
  local language = block.classes[1]
  local kind = (language and language ~= "text") and (language .. " code") or "text"
  return kind .. ", " .. words(lines, "line", "lines")
end

local function focusable_code(block)
  if block.attributes["tabindex"] == nil then
    block.attributes["tabindex"] = "0"
    block.attributes["role"] = "group"
    block.attributes["aria-label"] = block.attributes["aria-label"] or code_name(block)
  end
  return block
end

local function header_names(tbl)
  local names = {}
  for _, row in ipairs(tbl.head.rows) do
    for _, cell in ipairs(row.cells) do
      local text = pandoc.utils.stringify(cell.contents)
      if text ~= "" then
        names[#names + 1] = text
      end
    end
  end
  return names
end

local function focusable_table(tbl)
  local attributes = tbl.attr.attributes
  if attributes["tabindex"] == nil then
    attributes["tabindex"] = "0"
    local captioned = #tbl.caption.long > 0 or (tbl.caption.short and #tbl.caption.short > 0)
    if not captioned and attributes["aria-label"] == nil then
      local names = header_names(tbl)
      attributes["aria-label"] = #names > 0 and ("table of " .. table.concat(names, ", ")) or "table"
    end
  end
  return tbl
end

-- Display math: MathML takes no attributes, so the equation goes into a
-- span that is the box that scrolls (page.css, .math-region) and takes focus.
local function focusable_math(math)
  if math.mathtype ~= "DisplayMath" then
    return nil
  end
  -- attributes as a list: a table's keys would come out in any order
  return pandoc.Span({ math }, pandoc.Attr("", { "math-region" },
    { { "tabindex", "0" }, { "role", "group" }, { "aria-label", "equation" } }))
end

if not FORMAT:match("html") then
  return {}
end

return {
  { CodeBlock = focusable_code, Table = focusable_table, Math = focusable_math },
}
