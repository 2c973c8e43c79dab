--[[
quarto_layout.lua: callouts and figures as Quarto writes them, for the
Pandoc route, so both renderers give the same page and the same
build/article.md (checked against Quarto 1.9's output):

- A callout (::: {.callout-note title="..."}, as callouts.lua finds them)
  becomes, in HTML, Quarto's structure with the title as real text:
  div.callout.callout-note > div.callout-header >
  div.callout-title-container, then div.callout-body-container; in
  markdown, a GitHub alert: "> [!NOTE]", then the title as a level-3
  heading, then the body.
- A figure with an id fig-* (numbered by crossref.lua, which runs first:
  its caption starts "Figure N: ") is, in markdown, Quarto's div holding
  the image (empty alt) and the caption as a paragraph; in HTML it stays a
  <figure>, whose image keeps the caption as alt text (Quarto's instead
  points at the caption with aria-describedby).
]]

local markdown = FORMAT:match("markdown") or FORMAT:match("gfm") or FORMAT:match("commonmark")
local callouts = dofile(pandoc.path.join({ pandoc.path.directory(PANDOC_SCRIPT_FILE), "callouts.lua" }))

local function callout(div)
  local kind = callouts.kind(div)
  if kind == nil then
    return nil
  end
  local title = div.attributes["title"]
  if markdown then
    local blocks = pandoc.Blocks({ pandoc.RawBlock("markdown", "[!" .. callouts.alerts[kind] .. "]") })
    if title then
      blocks:insert(pandoc.Header(3, pandoc.Inlines(title)))
    end
    blocks:extend(div.content)
    return pandoc.BlockQuote(blocks)
  end
  -- Quarto's default title is the kind, capitalised
  title = title or (kind:sub(1, 1):upper() .. kind:sub(2))
  local header = pandoc.Div({ pandoc.Div({ pandoc.Plain(pandoc.Inlines(title)) },
    pandoc.Attr("", { "callout-title-container" })) }, pandoc.Attr("", { "callout-header" }))
  local body = pandoc.Div(div.content, pandoc.Attr("", { "callout-body-container", "callout-body" }))
  return pandoc.Div({ header, body }, pandoc.Attr(div.identifier, { "callout", "callout-" .. kind }))
end

local function figure(fig)
  if not fig.identifier:match("^fig%-") or not markdown then
    return nil
  end
  local caption = pandoc.utils.blocks_to_inlines(fig.caption.long)
  local images = pandoc.Inlines({})
  fig.content:walk({ Image = function(img)
    images:insert(pandoc.Image({}, img.src, img.title))
  end })
  return pandoc.Div({ pandoc.Para(images), pandoc.Para(caption) }, pandoc.Attr(fig.identifier))
end

-- a table with an id tbl-*, in markdown: a div of that id holding its
-- caption (crossref.lua's "Table N: ...") as a paragraph above the table,
-- which a pipe table cannot carry itself
local function tbl(t)
  if not t.identifier:match("^tbl%-") or not markdown then
    return nil
  end
  local caption = pandoc.utils.blocks_to_inlines(t.caption.long)
  local id = t.identifier
  t.identifier = ""
  t.caption = pandoc.Caption()
  return pandoc.Div({ pandoc.Para(caption), t }, pandoc.Attr(id))
end

return { { Div = callout, Figure = figure, Table = tbl } }
