"""The SDK against a live emulator, synchronous and asyncio."""

import asyncio
import os

import pytest

from agentplane import (APIConnectionError, Agentplane, AsyncAgentplane, NotFoundError, RateLimitError,
                        ValidationError, models)
from conftest import assert_whole

# The emulator is seeded; serve starts empty, so the suite makes what it needs there.
SEEDED = os.environ.get("AGENTPLANE_TEST_TARGET") != "serve"


def test_lists_follow_every_page(client, make_agent):
    if not SEEDED:
        for _ in range(3):
            make_agent()
    first = client.agents.page(limit=2)
    assert len(first["data"]) == 2
    everything = list(client.agents.list(limit=2))
    assert len(everything) == first["pagination"]["total"]
    assert len({a["id"] for a in everything}) == len(everything)


def test_an_agent_runs_and_its_failures_are_listed(client, make_agent):
    faq = next(iter(client.agents.list(type="simple", q="FAQ"))) if SEEDED else make_agent()
    ok: models.Execution = client.agents.execute(faq["id"], input={"question": "How do I reset my password?"})
    assert ok["status"] == "completed"
    assert client.executions.retrieve(ok["id"])["id"] == ok["id"]

    broken = make_agent(simulation={"fail": True, "fail_message": "the model fell over"})
    bad = client.agents.execute(broken["id"], input={"message": "hi"})
    assert bad["status"] == "failed"
    failed = [e["id"] for e in client.executions.list(status="failed", agent_id=broken["id"])]
    assert failed == [bad["id"]]


def test_errors_are_classes_by_status_and_code(client):
    with pytest.raises(NotFoundError) as err:
        client.agents.retrieve("2rfFt6qa0UQfFHDSW7MvKn0cfDx")
    assert (err.value.status, err.value.code) == (404, "not_found")
    assert err.value.request_id
    with pytest.raises(ValidationError):
        client.agents.create(name="", type="simple")
    with Agentplane(os.environ["AGENTPLANE_TEST_FLAKY_URL"], max_retries=0) as no_retry:
        with pytest.raises(RateLimitError) as limited:
            no_retry.agents.page(q="no retry")
    assert limited.value.retry_after == 0
    with Agentplane("http://127.0.0.1:1", max_retries=1, max_retry_delay=0.01) as closed:
        with pytest.raises(APIConnectionError):
            closed.agents.page()


def test_retries_are_idempotent(flaky):
    name = f"py idempotent {os.getpid()}"
    # The proxy lets the first try create the agent, then loses its answer: the retry replays it.
    created = flaky.agents.create(name=name, type="simple", config={"model": "gpt-4o-mini"})
    assert [a["id"] for a in flaky.agents.list(q=name)] == [created["id"]]  # each page: 429 first


def test_execution_stream_resumes(client, dropped, make_agent):
    slow = make_agent(simulation={"latency_ms": 20})
    run = client.agents.execute(slow["id"], input={"message": "tell me a long story"}, async_=True)
    stream = dropped.executions.stream(run["id"])
    events = list(stream)
    assert_whole(events)
    assert stream.reconnects > 0, "the proxy never cut the stream"
    assert events == list(client.executions.stream(run["id"]))
    assert events[-1].event == "done"


def test_chat_stream_resumes_the_same_turn(client, dropped, make_agent):
    agent = make_agent(simulation={"latency_ms": 10})
    session = client.chat.sessions.create(agent_id=agent["id"], title="sdk")
    stream = dropped.chat.sessions.messages.stream(session["id"], "Hello, stream!")
    events = list(stream)
    assert events[0].event == "execution"
    assert_whole(events)
    assert stream.reconnects > 0, "the proxy never cut the stream"
    text = "".join(e.data["content"] for e in events if e.event == "content")
    messages = list(client.chat.sessions.messages.list(session["id"]))
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["content"] == text


def test_async_client(make_agent):
    agent = make_agent(simulation={"latency_ms": 20})

    async def main():
        async with AsyncAgentplane() as ac, AsyncAgentplane(os.environ["AGENTPLANE_TEST_DROP_URL"]) as dropped:
            names = [a["name"] async for a in ac.agents.list(limit=2)]
            assert len(names) == (await ac.agents.page())["pagination"]["total"]
            with pytest.raises(NotFoundError):
                await ac.executions.retrieve("2rfFt6qa0UQfFHDSW7MvKn0cfDx")
            run = await ac.agents.execute(agent["id"], input={"message": "async"}, async_=True)
            stream = dropped.executions.stream(run["id"])
            events = [ev async for ev in stream]
            assert_whole(events)
            assert stream.reconnects > 0
            assert events == [ev async for ev in ac.executions.stream(run["id"])]

    asyncio.run(main())


def test_every_resource_answers(client):
    for name in ("llm_models", "mcp_tools", "guardrails", "memories", "approvals", "score_configs", "credentials",
                 "data_sources", "triggers", "traces", "scores", "assets", "prompts", "datasets", "evaluators",
                 "annotation_queues"):
        page = getattr(client, name).page(limit=5)
        assert isinstance(page["data"], list), name
        assert isinstance(page["pagination"]["total"], int), name
    if not SEEDED:
        return  # what follows reads the seed
    assert len(list(client.llm_models.list(limit=100))) == 42  # the seed's catalog
    prompt = client.prompts.page()["data"][0]
    versions = list(client.prompts.versions.list(prompt["id"]))
    assert versions
    assert client.prompts.versions.retrieve(prompt["id"], versions[0]["id"])["id"] == versions[0]["id"]
    source = client.data_sources.page()["data"][0]
    assert list(client.data_sources.versions.list(source["id"]))
    assert isinstance(client.traces.summary(), dict)


def test_datasets_evaluators_and_annotation_queues(client, make_agent):
    tag = os.getpid()
    ds = client.datasets.create(name=f"py sdk set {tag}")
    batch = client.datasets.items.create(ds["id"], items=[{"input": {"q": "a"}, "expected_output": "A"}, {"input": {"q": "b"}}])
    assert batch["count"] == 2
    items = list(client.datasets.items.list(ds["id"], limit=1))
    assert len(items) == 2
    assert client.datasets.items.retrieve(ds["id"], items[0]["id"])["id"] == items[0]["id"]

    ev = client.evaluators.create(name=f"py sdk has-hi {tag}", type="contains", config={"value": "hi"})
    assert client.evaluators.test(ev["id"], output="oh hi")["value"] == 1
    assert client.evaluators.test(ev["id"], output="bye")["value"] == 0

    x = client.agents.execute(make_agent()["id"], input={"message": "hi"})
    cfg = client.score_configs.create(name=f"py sdk good {tag}", data_type="boolean")
    q = client.annotation_queues.create(name=f"py sdk review {tag}", score_config_ids=[cfg["id"]])
    client.annotation_queues.add_items(q["id"], [x["id"]])
    claim = client.annotation_queues.next(q["id"])
    assert claim["item"]["execution_id"] == x["id"]
    done = client.annotation_queues.complete(q["id"], claim["item"]["id"], [{"config_id": cfg["id"], "value": 1}])
    assert len(done["scores"]) == 1
    client.scores.create(execution_id=x["id"], name=f"py sdk judge {tag}", data_type="boolean", value=1)
    agree = client.scores.agreement(judge=f"py sdk judge {tag}", human=cfg["name"])
    assert agree["count"] == 1 and agree["exact_agreement"] == 1


def test_the_openai_compatible_endpoint_runs_an_agent(client, make_agent):
    a = make_agent()
    assert any(m["id"] in (a["id"], a["name"]) for m in client.openai.models()["data"])
    out = client.openai.chat_completions(model=a["id"], messages=[{"role": "user", "content": "Hello"}])
    assert len(out["choices"]) == 1 and out["choices"][0]["message"]["content"]
    with pytest.raises(NotFoundError) as e:
        client.openai.chat_completions(model="no-such-agent", messages=[{"role": "user", "content": "Hi"}])
    assert not e.value.code.startswith("http_")
