-- The JATS bundle's figures: each image's link becomes the path of its
-- file inside the zip (figures/NAME.svg), where articlekit packs the file
-- its rule wrote (articlekit/render/formats/jats.py). The metadata field
-- jats-figures names a JSON file mapping each link as written to that
-- path and the alt text the file carries (what the figure plots, written
-- from its data by the experiment's save_figure), which becomes the
-- image's <alt-text> as it is the page's alt (embed_figures.lua); a file
-- with none keeps its caption. An image articlekit did not pack stops the
-- render: the XML would name a file the bundle lacks.

local figures = nil

local function load(meta)
  local path = meta["jats-figures"]
  if path == nil then
    error("articlekit: no jats-figures metadata: run this filter through articlekit's jats format")
  end
  local file = io.open(pandoc.utils.stringify(path), "r")
  if file == nil then
    error("articlekit: the figure list " .. pandoc.utils.stringify(path) .. " cannot be read")
  end
  figures = pandoc.json.decode(file:read("a"), false)
  file:close()
  return nil
end

local function pack(img)
  local inside = figures[img.src]
  if inside == nil then
    error("articlekit: the image " .. img.src .. " is not a figure articlekit packed: an image of the "
      .. "article must be a file an experiment's rule writes into figures/ (run `python -m articlekit parse` "
      .. "on the article for its line)")
  end
  img.src = inside.href
  if inside.alt then
    img.caption = pandoc.Inlines({ pandoc.Str(inside.alt) })
  end
  return img
end

return {
  { Meta = load },
  { Image = pack },
}
