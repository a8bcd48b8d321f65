/*
 * A PocketSphinx decoder kept loaded, for Node (plain N-API, C).
 *
 *   load(args: string[]): Promise<Decoder>         loads the model (arguments as for pocketsphinx_continuous)
 *   decode(decoder, samples: Int16Array | null, start: boolean, end: boolean): Promise<string>
 *       start: begins an utterance first; samples: 16 kHz PCM fed to it; end: ends the utterance.
 *       Resolves with the hypothesis so far (the final one when `end`).
 *   release(decoder): void                         frees the decoder (also done when it is collected)
 *
 * Loading and decoding run on the libuv thread pool, never on the event loop. One decoder is used by one
 * caller at a time: the JavaScript side chains its calls, so a decoder never has two jobs in flight.
 */
#include <node_api.h>
#include <pocketsphinx.h>
#include <sphinxbase/err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 64

typedef struct {
  ps_decoder_t *ps;
  cmd_ln_t *config;
  int in_utterance;
  int busy;
} decoder_t;

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  /* load */
  int argc;
  char *argv[MAX_ARGS];
  /* decode */
  decoder_t *decoder;
  napi_ref decoder_ref;
  int16_t *samples;
  size_t sample_count;
  int start;
  int end;
  /* result */
  char *text;
  const char *error;
} job_t;

#define CHECK(env, call)                                                                             \
  do {                                                                                               \
    if ((call) != napi_ok) {                                                                         \
      napi_throw_error((env), NULL, "sphinx decoder: N-API call failed: " #call);                    \
      return NULL;                                                                                   \
    }                                                                                                \
  } while (0)

static void free_decoder(decoder_t *decoder) {
  if (decoder->ps != NULL) ps_free(decoder->ps);
  if (decoder->config != NULL) cmd_ln_free_r(decoder->config);
  decoder->ps = NULL;
  decoder->config = NULL;
}

static void finalize_decoder(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  decoder_t *decoder = data;
  free_decoder(decoder);
  free(decoder);
}

static void free_job(job_t *job) {
  for (int i = 0; i < job->argc; i++) free(job->argv[i]);
  free(job->samples);
  free(job->text);
  free(job);
}

static char *copy_text(const char *text) {
  const char *source = text == NULL ? "" : text;
  size_t length = strlen(source);
  char *copy = malloc(length + 1);
  if (copy != NULL) memcpy(copy, source, length + 1);
  return copy;
}

/* ---- load ---- */

static void load_execute(napi_env env, void *data) {
  (void)env;
  job_t *job = data;
  cmd_ln_t *config = cmd_ln_parse_r(NULL, ps_args(), job->argc, job->argv, FALSE);
  if (config == NULL) {
    job->error = "sphinx decoder: invalid decoder arguments";
    return;
  }
  ps_decoder_t *ps = ps_init(config);
  if (ps == NULL) {
    cmd_ln_free_r(config);
    job->error = "sphinx decoder: cannot load the model";
    return;
  }
  decoder_t *decoder = calloc(1, sizeof(decoder_t));
  if (decoder == NULL) {
    ps_free(ps);
    cmd_ln_free_r(config);
    job->error = "sphinx decoder: out of memory";
    return;
  }
  decoder->ps = ps;
  decoder->config = config;
  job->decoder = decoder;
}

static void load_complete(napi_env env, napi_status status, void *data) {
  job_t *job = data;
  napi_value result;
  if (status == napi_ok && job->error == NULL) {
    if (napi_create_external(env, job->decoder, finalize_decoder, NULL, &result) == napi_ok) {
      napi_resolve_deferred(env, job->deferred, result);
    } else {
      finalize_decoder(env, job->decoder, NULL);
      napi_value message;
      napi_create_string_utf8(env, "sphinx decoder: cannot wrap the decoder", NAPI_AUTO_LENGTH, &message);
      napi_create_error(env, NULL, message, &result);
      napi_reject_deferred(env, job->deferred, result);
    }
  } else {
    if (job->decoder != NULL) finalize_decoder(env, job->decoder, NULL);
    napi_value message;
    napi_create_string_utf8(env, job->error ? job->error : "sphinx decoder: load cancelled", NAPI_AUTO_LENGTH,
                            &message);
    napi_create_error(env, NULL, message, &result);
    napi_reject_deferred(env, job->deferred, result);
  }
  napi_delete_async_work(env, job->work);
  free_job(job);
}

static napi_value load(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value args[1];
  CHECK(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  bool is_array = false;
  if (argc < 1 || napi_is_array(env, args[0], &is_array) != napi_ok || !is_array) {
    napi_throw_type_error(env, NULL, "load(args: string[])");
    return NULL;
  }
  uint32_t length = 0;
  CHECK(env, napi_get_array_length(env, args[0], &length));
  if (length > MAX_ARGS) {
    napi_throw_range_error(env, NULL, "too many decoder arguments");
    return NULL;
  }
  job_t *job = calloc(1, sizeof(job_t));
  if (job == NULL) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  for (uint32_t i = 0; i < length; i++) {
    napi_value item;
    size_t size = 0;
    if (napi_get_element(env, args[0], i, &item) != napi_ok ||
        napi_get_value_string_utf8(env, item, NULL, 0, &size) != napi_ok) {
      free_job(job);
      napi_throw_type_error(env, NULL, "decoder arguments must be strings");
      return NULL;
    }
    job->argv[i] = malloc(size + 1);
    job->argc = (int)i + 1;
    if (job->argv[i] == NULL) {
      free_job(job);
      napi_throw_error(env, NULL, "out of memory");
      return NULL;
    }
    napi_get_value_string_utf8(env, item, job->argv[i], size + 1, &size);
  }
  napi_value promise, name;
  CHECK(env, napi_create_promise(env, &job->deferred, &promise));
  CHECK(env, napi_create_string_utf8(env, "sphinx.load", NAPI_AUTO_LENGTH, &name));
  CHECK(env, napi_create_async_work(env, NULL, name, load_execute, load_complete, job, &job->work));
  CHECK(env, napi_queue_async_work(env, job->work));
  return promise;
}

/* ---- decode ---- */

static void decode_execute(napi_env env, void *data) {
  (void)env;
  job_t *job = data;
  decoder_t *decoder = job->decoder;
  if (decoder->ps == NULL) {
    job->error = "sphinx decoder: released";
    return;
  }
  if (job->start) {
    /* An utterance left open by a failed decode is closed first: each utterance starts clean. */
    if (decoder->in_utterance) ps_end_utt(decoder->ps);
    decoder->in_utterance = 0;
    if (ps_start_utt(decoder->ps) < 0) {
      job->error = "sphinx decoder: cannot start an utterance";
      return;
    }
    decoder->in_utterance = 1;
  }
  if (job->sample_count > 0) {
    if (!decoder->in_utterance) {
      job->error = "sphinx decoder: audio outside an utterance";
      return;
    }
    if (ps_process_raw(decoder->ps, job->samples, job->sample_count, FALSE, FALSE) < 0) {
      job->error = "sphinx decoder: cannot decode the audio";
      return;
    }
  }
  if (job->end && decoder->in_utterance) {
    decoder->in_utterance = 0;
    if (ps_end_utt(decoder->ps) < 0) {
      job->error = "sphinx decoder: cannot end the utterance";
      return;
    }
  }
  job->text = copy_text(decoder->in_utterance || job->end ? ps_get_hyp(decoder->ps, NULL) : "");
  if (job->text == NULL) job->error = "sphinx decoder: out of memory";
}

static void decode_complete(napi_env env, napi_status status, void *data) {
  job_t *job = data;
  napi_value result;
  job->decoder->busy = 0;
  if (status == napi_ok && job->error == NULL) {
    napi_create_string_utf8(env, job->text, NAPI_AUTO_LENGTH, &result);
    napi_resolve_deferred(env, job->deferred, result);
  } else {
    napi_value message;
    napi_create_string_utf8(env, job->error ? job->error : "sphinx decoder: decode cancelled", NAPI_AUTO_LENGTH,
                            &message);
    napi_create_error(env, NULL, message, &result);
    napi_reject_deferred(env, job->deferred, result);
  }
  napi_delete_reference(env, job->decoder_ref);
  napi_delete_async_work(env, job->work);
  free_job(job);
}

static decoder_t *get_decoder(napi_env env, napi_value value) {
  void *data = NULL;
  napi_valuetype type;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_external ||
      napi_get_value_external(env, value, &data) != napi_ok || data == NULL) {
    napi_throw_type_error(env, NULL, "not a sphinx decoder");
    return NULL;
  }
  return data;
}

static napi_value decode(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value args[4];
  CHECK(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 4) {
    napi_throw_type_error(env, NULL, "decode(decoder, samples, start, end)");
    return NULL;
  }
  decoder_t *decoder = get_decoder(env, args[0]);
  if (decoder == NULL) return NULL;
  if (decoder->busy) {
    napi_throw_error(env, NULL, "sphinx decoder: a decode is already in flight");
    return NULL;
  }
  if (decoder->ps == NULL) {
    napi_throw_error(env, NULL, "sphinx decoder: released");
    return NULL;
  }
  job_t *job = calloc(1, sizeof(job_t));
  if (job == NULL) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  bool flag = false;
  napi_get_value_bool(env, args[2], &flag);
  job->start = flag;
  flag = false;
  napi_get_value_bool(env, args[3], &flag);
  job->end = flag;
  bool is_typed = false;
  napi_is_typedarray(env, args[1], &is_typed);
  if (is_typed) {
    napi_typedarray_type type;
    size_t length = 0;
    void *samples = NULL;
    CHECK(env, napi_get_typedarray_info(env, args[1], &type, &length, &samples, NULL, NULL));
    if (type != napi_int16_array) {
      free_job(job);
      napi_throw_type_error(env, NULL, "samples must be an Int16Array");
      return NULL;
    }
    if (length > 0) {
      /* A copy: the caller may reuse its buffer while the decoder reads on another thread. */
      job->samples = malloc(length * sizeof(int16_t));
      if (job->samples == NULL) {
        free_job(job);
        napi_throw_error(env, NULL, "out of memory");
        return NULL;
      }
      memcpy(job->samples, samples, length * sizeof(int16_t));
      job->sample_count = length;
    }
  }
  job->decoder = decoder;
  /* Keeps the decoder alive (not collected) while the job runs. */
  CHECK(env, napi_create_reference(env, args[0], 1, &job->decoder_ref));
  napi_value promise, name;
  CHECK(env, napi_create_promise(env, &job->deferred, &promise));
  CHECK(env, napi_create_string_utf8(env, "sphinx.decode", NAPI_AUTO_LENGTH, &name));
  CHECK(env, napi_create_async_work(env, NULL, name, decode_execute, decode_complete, job, &job->work));
  decoder->busy = 1;
  CHECK(env, napi_queue_async_work(env, job->work));
  return promise;
}

/* ---- release ---- */

static napi_value release(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value args[1];
  CHECK(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 1) return NULL;
  decoder_t *decoder = get_decoder(env, args[0]);
  if (decoder == NULL) return NULL;
  if (decoder->busy) {
    napi_throw_error(env, NULL, "sphinx decoder: cannot release while decoding");
    return NULL;
  }
  free_decoder(decoder);
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  /* The decoder logs every step to stderr; errors come back as rejections instead. */
  err_set_logfp(NULL);
  napi_property_descriptor properties[] = {
      {"load", NULL, load, NULL, NULL, NULL, napi_default, NULL},
      {"decode", NULL, decode, NULL, NULL, NULL, napi_default, NULL},
      {"release", NULL, release, NULL, NULL, NULL, napi_default, NULL},
  };
  CHECK(env, napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
