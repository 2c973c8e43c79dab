--[[
cited.lua: after citeproc, the metadata that named its files goes. A writer
keeps what metadata it is given (Word as custom document properties): the
path of the bibliography's checked copy, a file of the build's machine,
would reach the edition, and differ between two builds.
]]

-- JATS's writer reads the bibliography again for its element citations,
-- and writes no metadata field of its own choosing
if FORMAT:match("jats") then
  return {}
end

-- the markdown is for diffs: a citation is its text, as Quarto's markdown
-- has it, not a link (whose target would move with the entry's id)
local markdown = FORMAT:match("markdown") or FORMAT:match("gfm") or FORMAT:match("commonmark")

function Link(link)
  if markdown and link.target:match("^#ref%-") then
    return link.content
  end
end

function Meta(meta)
  meta.bibliography = nil
  meta.csl = nil
  meta["link-citations"] = nil
  return meta
end
