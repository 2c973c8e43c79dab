--[[
callouts.lua: what a callout is, for every filter that draws one (the page's
quarto_layout.lua, the PDF's pdf_finish.lua), so that both find the same
ones: as Quarto, a Div with a class callout-KIND, KIND one of Quarto's five
(note, tip, warning, important, caution), wherever the class stands.

A filter loads it with dofile from its own folder; articlekit.render.page
names it among the files a render depends on (FILTER_LIBRARY).
]]

-- each kind and its GitHub alert, the form build/article.md writes it in
local ALERTS = { note = "NOTE", tip = "TIP", warning = "WARNING", important = "IMPORTANT", caution = "CAUTION" }

-- the callout's kind ("note", ...), or nil for any other Div
local function kind(div)
  for _, class in ipairs(div.classes) do
    local found = class:match("^callout%-(%a+)$")
    if found and ALERTS[found] then
      return found
    end
  end
end

return { kind = kind, alerts = ALERTS }
