// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt.Model: a loaded, verified .vitrt file, shared by the sessions made from it.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "images.h"
#include "text.h"

namespace vitrt::python {
namespace {

namespace api = vitrt::api;

ModelPtr load(const py::object& path_arg) {
  std::string path = path_argument(path_arg, "vitrt.Model");
  py::gil_scoped_release unlocked;  // mapping and verifying a large file takes a while
  return std::make_shared<ModelHandle>(ModelHandle{path, api::Model::load(path)});
}

// The labels as str (a label from a hostile file may not be UTF-8: decoded with replacement).
py::list labels(const api::Model& m) {
  py::list l;
  for (const std::string& label : m.labels()) l.append(text(label));
  return l;
}

// Everything `vitrt inspect` reports, as plain Python values.
py::dict inspect(const ModelHandle& h) {
  const api::Model& m = h.model;
  const api::ModelInfo info = m.info();
  const api::InputShape in = m.input_shape();
  const api::Preprocessing pre = m.preprocessing();
  py::dict metadata;
  for (const auto& [key, value] : m.metadata_entries()) metadata[text(key)] = text(value);
  py::dict op_counts;
  for (const auto& [op, count] : m.op_counts()) op_counts[text(op)] = count;
  py::dict preprocessing;
  preprocessing["channels"] = pre.channels;
  preprocessing["resize_shorter"] = pre.resize_shorter;
  preprocessing["crop"] = py::make_tuple(pre.crop_height, pre.crop_width);
  preprocessing["interpolation"] = pre.interpolation;
  preprocessing["mean"] = pre.mean;
  preprocessing["std"] = pre.std;
  py::dict d;
  d["path"] = fs_text(h.path);
  d["arch"] = text(info.arch);
  d["producer"] = text(info.producer);
  d["format_version"] = info.format_version;
  d["input_shape"] = py::make_tuple(in.channels, in.height, in.width);
  d["input_dtype"] = info.input_dtype;
  d["input_dims"] = info.input_dims;  // -1: the batch
  d["output_dims"] = info.output_dims;
  d["num_classes"] = info.num_classes;
  d["labels"] = labels(m);
  d["preprocessing"] = preprocessing;
  d["metadata"] = metadata;
  d["num_ops"] = info.num_ops;
  d["op_counts"] = op_counts;
  d["num_tensors"] = info.num_tensors;
  d["num_weights"] = info.num_weights;
  d["weight_bytes"] = info.weight_bytes;
  return d;
}

}  // namespace

void bind_model(py::module_& m) {
  py::class_<ModelHandle, std::shared_ptr<ModelHandle>>(m, "Model", R"doc(
A .vitrt model file, memory-mapped and verified. Immutable: any number of threads may share one Model, each
running its own Session.

    model = vitrt.Model("fashion_deit.vitrt")
    model.inspect()["arch"], model.input_shape, model.labels
)doc")
      .def(py::init(&load), py::arg("path"),
           "Loads and verifies a .vitrt file: path is a str, bytes or os.PathLike (vitrt.BadModelError, "
           "vitrt.FileError on failure).")
      .def_property_readonly(
          "path", [](const ModelHandle& h) { return fs_text(h.path); }, "The file the model was loaded from.")
      .def_property_readonly(
          "arch", [](const ModelHandle& h) { return text(h.model.arch()); }, "The architecture, e.g. 'deit'.")
      .def_property_readonly(
          "input_shape",
          [](const ModelHandle& h) {
            const api::InputShape s = h.model.input_shape();
            return py::make_tuple(s.channels, s.height, s.width);
          },
          "(C, H, W) of one image; Session.run takes float32 [N, C, H, W].")
      .def_property_readonly(
          "num_classes", [](const ModelHandle& h) { return h.model.num_classes(); }, "Output classes.")
      .def_property_readonly(
          "labels", [](const ModelHandle& h) { return labels(h.model); },
          "The class labels in class order (may be fewer than num_classes, or none).")
      .def(
          "preprocess",
          [](const ModelHandle& h, const py::object& image) {
            const ImageSource src = image_source(image, 0);
            const api::InputShape s = h.model.input_shape();
            py::array_t<float> dst(std::vector<py::ssize_t>{s.channels, s.height, s.width});
            float* p = dst.mutable_data();
            {
              py::gil_scoped_release unlocked;
              preprocess(h.model, src, p, s.elements());
            }
            return dst;
          },
          py::arg("image"),
          "Decodes a PNG/JPEG (a path, or its bytes) and preprocesses it as the model says (resize, centre "
          "crop, normalisation), exactly as `vitrt classify` does: float32 [C, H, W].")
      .def("inspect", &inspect,
           "Everything `vitrt inspect` reports as a dict: arch, producer, format_version, input_shape, "
           "input/output dims, num_classes, labels, preprocessing, metadata, op counts, weights.")
      .def("__repr__", [](const ModelHandle& h) {
        return py::str("vitrt.Model({!r}, arch={!r}, classes={})")
            .format(fs_text(h.path), text(h.model.arch()), h.model.num_classes());
      });
}

}  // namespace vitrt::python
