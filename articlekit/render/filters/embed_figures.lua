-- Figures embedded by articlekit, never by a renderer following a link.
--
-- articlekit (articlekit/render/figuredata.py, figure_data) reads each figure the
-- article shows from the file its experiment's rule wrote, once checked
-- (a regular file in figures/, no symbolic link), and writes a JSON file
-- mapping each link as written to a data: URI of its bytes; the metadata
-- field figure-data names that file. Here every image's link becomes its
-- data URI, so the page embeds what articlekit read and the renderer
-- fetches no file for it, and its alt text becomes the one the file carries
-- (what the figure plots, its axes, its headline number: written from the
-- data by the experiment's save_figure), beside the caption; a file with
-- none keeps the caption as its alt text. An image articlekit did not embed stops the
-- render (the prose check refuses it before: this is the second lock).
-- The page and Word (whose writer embeds a data: URI as the picture itself);
-- the markdown keeps the links, the PDF reads the checked files.

local figures = nil

local function load(meta)
  local path = meta["figure-data"]
  if path == nil then
    return nil
  end
  local file = io.open(pandoc.utils.stringify(path), "r")
  if file == nil then
    error("articlekit: the figure data file " .. pandoc.utils.stringify(path) .. " cannot be read")
  end
  figures = pandoc.json.decode(file:read("a"), false)
  file:close()
  return nil
end

local function embed(img)
  local data = figures and figures[img.src]
  if data == nil then
    error("articlekit: the image " .. img.src .. " is not a figure articlekit embedded: an image on the page "
      .. "must be a file an experiment's rule writes into figures/ (run `python -m articlekit parse` on the "
      .. "article for its line)")
  end
  img.src = data.src
  if quarto ~= nil then
    -- Quarto writes a figure's alt text from fig-alt only, and none without it
    img.attributes["fig-alt"] = data.alt or pandoc.utils.stringify(img.caption)
  elseif data.alt and FORMAT == "docx" then
    -- Word's picture description is the image's own inlines (its alt text)
    img.caption = pandoc.Inlines(data.alt)
  elseif data.alt then
    img.attributes["alt"] = data.alt
  end
  return img
end

if not (FORMAT:match("html") or FORMAT == "docx") then
  return {}
end

return {
  { Meta = load },
  { Image = embed },
}
