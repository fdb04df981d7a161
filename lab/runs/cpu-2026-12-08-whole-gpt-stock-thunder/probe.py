"""CPU repro attempt: stock Thunder on litgpt GPT + loss (no segkit import)."""
import sys, time, torch, thunder
import litgpt.model as M, litgpt.config as C
order = sys.argv[1]
cfg = C.Config.from_name("Llama-3.2-1B", block_size=64, n_layer=2, n_embd=64, n_head=4, n_query_groups=2, head_size=16, intermediate_size=128, vocab_size=256, padded_vocab_size=256)
torch.manual_seed(0)
gpt = M.GPT(cfg); gpt.max_seq_length = 64; gpt.reset_parameters()
class GPTLoss(torch.nn.Module):
    def __init__(s, g): super().__init__(); s.gpt = g
    def forward(s, idx, t): return torch.nn.functional.cross_entropy(s.gpt(idx).flatten(0, 1), t.flatten())
m = GPTLoss(gpt)
tok = torch.randint(0, 256, (2, 65)); idx, tgt = tok[:, :-1].contiguous(), tok[:, 1:].contiguous()
if "compile" in order:
    c = torch.compile(m); c(idx, tgt).backward(); print("compile ok")
j = thunder.jit(m)
t0=time.time(); l = j(idx, tgt); l.backward(); print("thunder ok", float(l), time.time()-t0)
