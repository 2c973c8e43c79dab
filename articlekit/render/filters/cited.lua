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

function Meta(meta)
  meta.bibliography = nil
  meta.csl = nil
  meta["link-citations"] = nil
  return meta
end
